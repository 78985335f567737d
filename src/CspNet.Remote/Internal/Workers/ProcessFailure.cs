using System;

namespace CspNet.Remote.Internal.Workers;

/// <summary>An exception thrown by a process on a worker, as it travels back: type, message, stack trace, inner failure.</summary>
internal sealed record ProcessFailure(string TypeName, string Message, string StackTrace, ProcessFailure? Inner)
{
    /// <summary>How many inner exceptions travel; deeper ones are cut (a report, not a dump).</summary>
    internal const int MaxDepth = 8;

    /// <summary>Captures <paramref name="exception"/> (and its inner exceptions, to <see cref="MaxDepth"/>).</summary>
    internal static ProcessFailure From(Exception exception) => From(exception, 0);

    /// <summary>The exception the caller of <c>DistParallel.Run</c> sees: a <see cref="RemoteProcessException"/>.</summary>
    internal RemoteProcessException ToException() => new(TypeName, Message, StackTrace, Inner?.ToException());

    private static ProcessFailure From(Exception exception, int depth)
    {
        ArgumentNullException.ThrowIfNull(exception);
        ProcessFailure? inner = depth < MaxDepth && exception.InnerException is { } innerException ? From(innerException, depth + 1) : null;
        return new ProcessFailure(exception.GetType().FullName ?? exception.GetType().Name, exception.Message, exception.StackTrace ?? string.Empty, inner);
    }
}
