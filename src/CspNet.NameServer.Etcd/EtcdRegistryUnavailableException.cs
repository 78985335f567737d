using System;
using System.IO;

namespace CspNet.NameServer.Etcd;

/// <summary>
/// etcd did not answer in time, has no quorum, or refused the NameServer's credentials; the
/// message says what to check. The NameServer answers it with the gRPC status UNAVAILABLE and
/// keeps serving, so programs retry (possibly through another NameServer replica).
/// </summary>
public sealed class EtcdRegistryUnavailableException : IOException
{
    /// <summary>Creates the exception with a default message.</summary>
    public EtcdRegistryUnavailableException()
        : base("etcd is unavailable.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What happened and what to check.</param>
    public EtcdRegistryUnavailableException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the exception that caused it.</summary>
    /// <param name="message">What happened and what to check.</param>
    /// <param name="innerException">The etcd client's failure.</param>
    public EtcdRegistryUnavailableException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
