using System;
using System.Threading;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// Runs an <see cref="IAsyncCSPProcess"/> where <see cref="DistParallel"/> and the pools run
/// processes: on a thread of its own, which waits for the process's task. The process gets its
/// run's cancellation token (<see cref="ProcessCancellation"/>) as <c>RunAsync</c>'s argument.
/// </summary>
/// <remarks>
/// The thread only waits: the process's continuations run on the .NET thread pool as usual. A
/// dedicated thread keeps one path for both kinds (the ambient node and cancellation, the
/// worker's accounting), at the price of one parked thread per async process.
/// </remarks>
internal sealed class AsyncProcessRunner(IAsyncCSPProcess process) : ICSPProcess
{
    /// <summary>The process itself: what is packed and shipped.</summary>
    internal IAsyncCSPProcess Process { get; } = process;

    public void Run()
    {
        CancellationToken token = ProcessCancellation.Current?.Token ?? CancellationToken.None;
#pragma warning disable RS0030 // A thread of its own that does nothing else: waiting here blocks no pool thread.
        Process.RunAsync(token).GetAwaiter().GetResult();
#pragma warning restore RS0030
    }

    /// <summary>The object a process is shipped as: the async process for a runner, else the process.</summary>
    internal static object Shipped(ICSPProcess process) => process is AsyncProcessRunner runner ? runner.Process : process;

    /// <summary>A deserialized process as a thread process: async ones wrapped.</summary>
    /// <exception cref="ArgumentException">Neither kind of process.</exception>
    internal static ICSPProcess AsThreadProcess(object process) => process switch
    {
        ICSPProcess thread => thread,
        IAsyncCSPProcess async => new AsyncProcessRunner(async),
        _ => throw new ArgumentException($"{process.GetType()} is neither an ICSPProcess nor an IAsyncCSPProcess.", nameof(process)),
    };
}
