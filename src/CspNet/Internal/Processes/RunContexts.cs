using System.Runtime.CompilerServices;
using System.Threading;

namespace CspNet.Internal.Processes;

/// <summary>
/// The execution contexts (AsyncLocal values, culture) in which a <see cref="Parallel"/> run
/// starts its processes. The one for async processes carries the mark <see cref="ProcessContext"/>
/// reads; the one for thread processes does not. A run captures the first once, when it starts
/// (nested parallels use their root run's), and derives the second only if it has thread processes.
/// </summary>
/// <remarks>
/// A process starts with the context of the <see cref="Parallel.RunAsync"/> caller, or, if the
/// caller suppressed flow (<see cref="ExecutionContext.SuppressFlow"/>), with a clean default
/// context; never with what an earlier process on the same pool thread left behind, because every
/// process runs inside <see cref="ExecutionContext.Run"/>, which restores the thread's own context
/// (and synchronization context) when the process ends.
/// </remarks>
internal static class RunContexts
{
    // An object, not a bool: AsyncLocal<bool> would box on every set.
    private static readonly object s_mark = new();
    private static readonly AsyncLocal<object?> s_inAsyncProcess = new();
    private static readonly ContextCallback s_captureUnmarked = static state =>
    {
        s_inAsyncProcess.Value = null;
        ((StrongBox<ExecutionContext?>)state!).Value = ExecutionContext.Capture();
    };

    private static StrongBox<(ExecutionContext Marked, ExecutionContext Unmarked)>? s_clean;

    /// <summary>Whether the calling code runs in the context of an async process started by a <see cref="Parallel"/>.</summary>
    internal static bool InAsyncProcess => s_inAsyncProcess.Value is not null;

    /// <summary>
    /// The context for the async processes of a run started by the calling code: the caller's own
    /// if it is an async process already (no allocation, the common case of a nested run), else a
    /// copy with the mark set.
    /// </summary>
    internal static ExecutionContext CaptureForAsyncProcesses()
    {
        ExecutionContext? caller = ExecutionContext.Capture();
        if (caller is null)
        {
            return Clean().Marked;
        }

        if (s_inAsyncProcess.Value is not null)
        {
            return caller;
        }

        // Set the mark on this thread, capture, and put the caller's context back exactly.
        s_inAsyncProcess.Value = s_mark;
        ExecutionContext marked = ExecutionContext.Capture()!;
        ExecutionContext.Restore(caller);
        return marked;
    }

    /// <summary>The context for thread processes: <paramref name="forAsyncProcesses"/> without the mark.</summary>
    internal static ExecutionContext ForThreadProcesses(ExecutionContext forAsyncProcesses)
    {
        if (s_clean is { } clean && ReferenceEquals(forAsyncProcesses, clean.Value.Marked))
        {
            return clean.Value.Unmarked;
        }

        // ExecutionContext.Run restores the calling thread's context afterwards: the unmarking
        // is seen only by the capture inside.
        var captured = new StrongBox<ExecutionContext?>();
        ExecutionContext.Run(forAsyncProcesses, s_captureUnmarked, captured);
        return captured.Value!;
    }

    /// <summary>The contexts for a run whose caller suppressed flow: built from a clean context, once.</summary>
    private static (ExecutionContext Marked, ExecutionContext Unmarked) Clean()
    {
        if (Volatile.Read(ref s_clean) is { } clean)
        {
            return clean.Value;
        }

        // ExecutionContext.Default is not public. A thread started without flowing a context
        // (UnsafeStart) has none of its own, so what it captures is the default context.
        (ExecutionContext, ExecutionContext) captured = default;
        var thread = new Thread(() =>
        {
            ExecutionContext unmarked = ExecutionContext.Capture()!;
            s_inAsyncProcess.Value = s_mark;
            captured = (ExecutionContext.Capture()!, unmarked);
        })
        {
            IsBackground = true,
            Name = "CspNet default-context capture",
        };
        thread.UnsafeStart();
        thread.Join();
        Interlocked.CompareExchange(ref s_clean, new StrongBox<(ExecutionContext, ExecutionContext)>(captured), null);
        return s_clean.Value;
    }
}
