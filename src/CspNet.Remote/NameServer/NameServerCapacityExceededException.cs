using System;

namespace CspNet.Remote.NameServer;

/// <summary>The registry holds as many leases or names as its options allow.</summary>
/// <remarks>The NameServer answers this with the gRPC status <c>RESOURCE_EXHAUSTED</c>.</remarks>
public sealed class NameServerCapacityExceededException : InvalidOperationException
{
    /// <summary>Creates the exception with a default message.</summary>
    public NameServerCapacityExceededException()
        : base("The NameServer is full.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What happened.</param>
    public NameServerCapacityExceededException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the exception that caused it.</summary>
    /// <param name="message">What happened.</param>
    /// <param name="innerException">The cause.</param>
    public NameServerCapacityExceededException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
