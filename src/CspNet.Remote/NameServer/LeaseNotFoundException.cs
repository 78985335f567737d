using System;

namespace CspNet.Remote.NameServer;

/// <summary>A lease is unknown: it expired, was closed, or the NameServer restarted since it was opened.</summary>
/// <remarks>The NameServer answers this with the gRPC status <c>NOT_FOUND</c>; the program opens a new lease and registers its names again.</remarks>
public sealed class LeaseNotFoundException : InvalidOperationException
{
    /// <summary>Creates the exception with a default message.</summary>
    public LeaseNotFoundException()
        : base("The lease is unknown: it expired, was closed, or the NameServer restarted.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What happened.</param>
    public LeaseNotFoundException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the exception that caused it.</summary>
    /// <param name="message">What happened.</param>
    /// <param name="innerException">The cause.</param>
    public LeaseNotFoundException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
