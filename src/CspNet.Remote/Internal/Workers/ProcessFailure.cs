using System;

namespace CspNet.Remote.Internal;

/// <summary>An exception thrown by a process on a worker, as it travels back: type, message, stack trace, inner failure.</summary>
internal sealed record ProcessFailure(string TypeName, string Message, string StackTrace, ProcessFailure? Inner)
{
    /// <summary>Captures <paramref name="exception"/> (and its inner exceptions, to a bounded depth).</summary>
    internal static ProcessFailure From(Exception exception) => throw new NotImplementedException("Being written on main (session 4).");

    /// <summary>The exception the caller of <c>DistParallel.Run</c> sees: a <see cref="RemoteProcessException"/>.</summary>
    internal RemoteProcessException ToException() => throw new NotImplementedException();
}
