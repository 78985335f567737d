using System;

namespace CspNet;

/// <summary>
/// A worker pool refused to run a process <c>DistParallel</c> sent it: an assembly image did not
/// have its SHA-256 (tampered or corrupt in transit), a type in the process is outside the
/// worker's allow-list, or its fields did not decode. The process did not run anywhere.
/// </summary>
public sealed class ProcessRefusedException : Exception
{
    /// <summary>Creates the exception with a default message.</summary>
    public ProcessRefusedException()
        : base("A worker pool refused to run the process.")
    {
        Reason = string.Empty;
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What happened.</param>
    public ProcessRefusedException(string message)
        : base(message)
    {
        Reason = string.Empty;
    }

    /// <summary>Creates the exception with a message and its cause.</summary>
    /// <param name="message">What happened.</param>
    /// <param name="innerException">The cause.</param>
    public ProcessRefusedException(string message, Exception innerException)
        : base(message, innerException)
    {
        Reason = string.Empty;
    }

    /// <summary>Creates the report of a refusal.</summary>
    /// <param name="reason">The refusal's reason as the protocol names it, e.g. <c>HashMismatch</c>.</param>
    /// <param name="message">The pool's explanation.</param>
    public ProcessRefusedException(string reason, string message)
        : base(message)
    {
        Reason = reason;
    }

    /// <summary>The refusal's reason as the protocol names it: <c>HashMismatch</c>, <c>AssemblyMissing</c>, <c>TypeNotAllowed</c> or <c>MalformedState</c>.</summary>
    public string Reason { get; }
}
