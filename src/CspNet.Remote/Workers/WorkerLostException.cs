using System;

namespace CspNet;

/// <summary>
/// A process started on a remote worker, and then the worker's program was lost (it exited, was
/// killed, or stopped answering keep-alive pings) before saying the process had ended.
/// </summary>
/// <remarks>
/// <c>DistParallel</c> does not run such a process again: it may already have had effects (written
/// to named channels, synchronised on barriers), and running it a second time would duplicate
/// them. Whether to retry is the caller's decision. A process whose worker was lost before it
/// started is run again elsewhere instead, and reports nothing.
/// </remarks>
public sealed class WorkerLostException : Exception
{
    /// <summary>Creates the exception with a default message.</summary>
    public WorkerLostException()
        : base("The worker running the process was lost.")
    {
        ProcessType = string.Empty;
        Pool = string.Empty;
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What happened.</param>
    public WorkerLostException(string message)
        : base(message)
    {
        ProcessType = string.Empty;
        Pool = string.Empty;
    }

    /// <summary>Creates the exception with a message and its cause.</summary>
    /// <param name="message">What happened.</param>
    /// <param name="innerException">The cause (the failed call).</param>
    public WorkerLostException(string message, Exception innerException)
        : base(message, innerException)
    {
        ProcessType = string.Empty;
        Pool = string.Empty;
    }

    /// <summary>Creates the report of a lost worker.</summary>
    /// <param name="processType">The full name of the process type that was running.</param>
    /// <param name="pool">The pool's name and address.</param>
    /// <param name="innerException">The cause (the failed call), if any.</param>
    public WorkerLostException(string processType, string pool, Exception? innerException)
        : base(
            $"The worker pool {pool} was lost while it ran a {processType}. The process had started and may have had effects " +
            "(values written to named channels), so it is not run again; run it again yourself if that is safe.",
            innerException)
    {
        ProcessType = processType;
        Pool = pool;
    }

    /// <summary>The full name of the process type that was running.</summary>
    public string ProcessType { get; }

    /// <summary>The pool (name and address) that was lost.</summary>
    public string Pool { get; }
}
