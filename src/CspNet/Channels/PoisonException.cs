using System;

namespace CspNet;

/// <summary>
/// Thrown by every blocked and every later operation on a poisoned channel.
/// </summary>
/// <remarks>
/// Poison is how a CSP network shuts down: a process that wants the network to stop poisons
/// its channels; every process that then touches one of them gets this exception and, by
/// convention, poisons its own channels before it ends, so the shutdown spreads through the
/// network and every <see cref="Parallel"/> returns.
/// </remarks>
public class PoisonException : InvalidOperationException
{
    /// <summary>Creates a poison exception with a default message.</summary>
    public PoisonException()
        : base("The channel has been poisoned.")
    {
    }

    /// <summary>Creates a poison exception with the given message.</summary>
    /// <param name="message">What was poisoned.</param>
    public PoisonException(string message)
        : base(message)
    {
    }

    /// <summary>Creates a poison exception with the given message and cause.</summary>
    /// <param name="message">What was poisoned.</param>
    /// <param name="innerException">The cause.</param>
    public PoisonException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
