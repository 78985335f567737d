using System;

namespace CspNet;

/// <summary>
/// An exception thrown by a process that ran on a remote worker, as <c>DistParallel</c>
/// reports it: the remote exception's type name, message and stack trace (exception objects do not
/// cross programs; their text does).
/// </summary>
public sealed class RemoteProcessException : Exception
{
    /// <summary>Creates an exception with a message.</summary>
    public RemoteProcessException(string message)
        : base(message)
    {
        RemoteTypeName = string.Empty;
        RemoteStackTrace = string.Empty;
    }

    /// <summary>Creates an exception with a message and an inner exception.</summary>
    public RemoteProcessException(string message, Exception innerException)
        : base(message, innerException)
    {
        RemoteTypeName = string.Empty;
        RemoteStackTrace = string.Empty;
    }

    /// <summary>Creates the report of a remote exception.</summary>
    /// <param name="remoteTypeName">The full name of the remote exception's type.</param>
    /// <param name="message">The remote exception's message.</param>
    /// <param name="remoteStackTrace">The remote exception's stack trace, as the worker printed it.</param>
    /// <param name="innerException">The report of the remote exception's inner exception, if any.</param>
    public RemoteProcessException(string remoteTypeName, string message, string remoteStackTrace, RemoteProcessException? innerException)
        : base(message, innerException)
    {
        RemoteTypeName = remoteTypeName;
        RemoteStackTrace = remoteStackTrace;
    }

    /// <summary>The full name of the exception's type on the worker, for example <c>System.InvalidOperationException</c>.</summary>
    public string RemoteTypeName { get; }

    /// <summary>The stack trace of the exception on the worker.</summary>
    public string RemoteStackTrace { get; }

    /// <inheritdoc/>
    public override string ToString() =>
        $"{GetType().FullName} (remote {RemoteTypeName}): {Message}{Environment.NewLine}--- remote stack trace ---{Environment.NewLine}{RemoteStackTrace}" +
        (InnerException is null ? string.Empty : $"{Environment.NewLine} ---> {InnerException}");
}
