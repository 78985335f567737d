using System;
using System.IO;

namespace CspNet.Remote.NameServer;

/// <summary>The NameServer could not be reached for longer than the configured NameServer timeout.</summary>
public sealed class NameServerUnavailableException : IOException
{
    /// <summary>Creates the exception with a default message.</summary>
    public NameServerUnavailableException()
        : base("The NameServer is unavailable.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What happened.</param>
    public NameServerUnavailableException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the exception that caused it.</summary>
    /// <param name="message">What happened; names the NameServer address.</param>
    /// <param name="innerException">The last failure.</param>
    public NameServerUnavailableException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
