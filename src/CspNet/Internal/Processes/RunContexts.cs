using System.Runtime.CompilerServices;
using System.Threading;

namespace CspNet.Internal.Processes;

/// <summary>
/// The execution contexts (AsyncLocal values, culture) in which one <see cref="Parallel"/> run
/// starts its processes: captured once per run, shared by all its processes. The one for async
/// processes carries the mark <see cref="ProcessContext"/> reads; the one for thread processes
/// does not.
/// </summary>
/// <remarks>
/// A process starts with the context of the <see cref="Parallel.RunAsync"/> caller, or, if the
/// caller suppressed flow (<see cref="ExecutionContext.SuppressFlow"/>), with a clean default
/// context; never with what an earlier process on the same pool thread left behind, because every
/// process runs inside <see cref="ExecutionContext.Run"/>, which restores the thread's own context
/// (and synchronization context) when the process ends.
/// </remarks>
/// <param name="AsyncProcesses">The context async processes start in.</param>
/// <param name="ThreadProcesses">The context thread processes start in.</param>
internal readonly record struct RunContexts(ExecutionContext AsyncProcesses, ExecutionContext ThreadProcesses)
{
    private static readonly AsyncLocal<bool> s_inAsyncProcess = new();
    private static StrongBox<RunContexts>? s_clean;

    /// <summary>Whether the calling code runs in the context of an async process started by a <see cref="Parallel"/>.</summary>
    internal static bool InAsyncProcess => s_inAsyncProcess.Value;

    /// <summary>
    /// Captures the contexts for a run started by the calling code. One of the two is the
    /// caller's own context; the other is a copy with the mark flipped, the only allocation.
    /// </summary>
    internal static RunContexts Capture()
    {
        ExecutionContext? caller = ExecutionContext.Capture();
        if (caller is null)
        {
            return Clean();
        }

        // Flip the mark on this thread, capture, and put the caller's context back exactly.
        bool callerInAsyncProcess = s_inAsyncProcess.Value;
        s_inAsyncProcess.Value = !callerInAsyncProcess;
        ExecutionContext flipped = ExecutionContext.Capture()!;
        ExecutionContext.Restore(caller);
        return callerInAsyncProcess ? new RunContexts(caller, flipped) : new RunContexts(flipped, caller);
    }

    /// <summary>The contexts for a run whose caller suppressed flow: built from a clean context, once.</summary>
    private static RunContexts Clean()
    {
        if (Volatile.Read(ref s_clean) is { } clean)
        {
            return clean.Value;
        }

        // ExecutionContext.Default is not public. A thread started without flowing a context
        // (UnsafeStart) has none of its own, so what it captures is the default context.
        RunContexts captured = default;
        var thread = new Thread(() => captured = Capture())
        {
            IsBackground = true,
            Name = "CspNet default-context capture",
        };
        thread.UnsafeStart();
        thread.Join();
        Interlocked.CompareExchange(ref s_clean, new StrongBox<RunContexts>(captured), null);
        return s_clean.Value;
    }
}
