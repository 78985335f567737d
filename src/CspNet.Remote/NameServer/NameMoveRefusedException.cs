using System;

namespace CspNet.Remote.NameServer;

/// <summary>
/// A NameServer refused to move a name to another program: the name is not registered under the
/// mover's lease (another program holds it, or it is gone), or the program it was to move to has
/// no live lease.
/// </summary>
/// <remarks>The NameServer answers this with the gRPC status <c>FAILED_PRECONDITION</c>; the name stays where it was.</remarks>
public sealed class NameMoveRefusedException : InvalidOperationException
{
    /// <summary>Creates the exception with a default message.</summary>
    public NameMoveRefusedException()
        : base("The NameServer refused to move the name: it is not registered under this lease, or the program it was to move to is gone.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What happened.</param>
    public NameMoveRefusedException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the exception that caused it.</summary>
    /// <param name="message">What happened.</param>
    /// <param name="innerException">The cause.</param>
    public NameMoveRefusedException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
