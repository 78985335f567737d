using System;

namespace CspNet;

/// <summary>
/// The program at the other end of a named channel, barrier or bucket is gone (it exited, was
/// killed, or stayed silent longer than its peer timeout), so the operation can never complete.
/// </summary>
/// <remarks>
/// It derives from <see cref="PoisonException"/> because its consequence is the same: no further
/// communication is possible on the construct, and a process that shuts down on poison shuts
/// down on a lost peer too.
/// </remarks>
public sealed class PeerLostException : PoisonException
{
    /// <summary>Creates the exception.</summary>
    public PeerLostException()
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What was lost and where.</param>
    public PeerLostException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the transport error that revealed the loss.</summary>
    /// <param name="message">What was lost and where.</param>
    /// <param name="innerException">The transport error.</param>
    public PeerLostException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
