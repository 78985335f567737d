using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace CspNet.Internal.Scheduling;

/// <summary>
/// Where a completed async operation's continuation runs: next on the completing thread, once
/// that thread's current step is over, or on the .NET thread pool.
/// </summary>
/// <remarks>
/// <para>
/// A rendezvous wakes its partner and then, usually, parks itself soon after: a writer that
/// handed its value over reads its next input, a reader that took one writes it on. Queuing the
/// woken process to the thread pool made every hand-off a hop to another thread (a work item, a
/// wake-up, a cold cache), which was most of the cost of an async communication. So a
/// continuation dispatched while a <see cref="HandOffRunner"/> is running on this thread goes
/// into one of its next-run slots, and runs when the current continuation returns, that is when
/// the waker has parked or ended: Go's scheduler does the same with its next-run slot. It never
/// runs on the waker's stack, and never under a lock: the runner is a loop, so a chain of
/// hand-offs is a loop, not a recursion.
/// </para>
/// <para>
/// Bounds, so that no process waits behind another: four slots per thread (a fifth wake sends
/// the oldest to the pool), a chain of at most <see cref="HandOffRunner.ChainBudget"/> continuations per
/// thread-pool work item (then the rest go to the pool, behind whatever else is queued there),
/// and the <see cref="Watchdog"/>, which moves slotted continuations to the pool when their
/// thread has started nothing for a whole tick (a process that computes for long without parking,
/// or blocks its thread). Everything dispatched elsewhere (a thread process, a timer, a
/// cancellation) goes to the pool as before, and starts a runner there.
/// </para>
/// <para>
/// The runtime configuration knob <c>CspNet.HandOff</c> set to <c>pool</c> (in the project:
/// <c>&lt;RuntimeHostConfigurationOption Include="CspNet.HandOff" Value="pool" /&gt;</c>, or in
/// runtimeconfig.json's <c>configProperties</c>) turns the runner off: every continuation goes to
/// the pool, as with <c>ManualResetValueTaskSourceCore</c> and asynchronous continuations. Without
/// the knob, <c>CSPNET_HANDOFF=pool</c> in the environment does the same (a fallback for runs that
/// cannot change the runtime configuration, such as benchmark jobs). Read once, at start-up; it
/// exists for A/B measurements.
/// </para>
/// </remarks>
internal static class HandOff
{
    /// <summary>The runtime configuration knob that chooses where continuations go (<c>pool</c> turns the slots off).</summary>
    internal const string ModeSwitch = "CspNet.HandOff";

    /// <summary>Whether continuations go to next-run slots; false when the mode is <c>pool</c>.</summary>
    internal static readonly bool Enabled = !string.Equals(
        AppContext.GetData(ModeSwitch) as string ?? Environment.GetEnvironmentVariable("CSPNET_HANDOFF"),
        "pool",
        StringComparison.OrdinalIgnoreCase);

    [ThreadStatic]
    private static HandOffRunner? t_runner;

    /// <summary>
    /// Queues <paramref name="item"/>'s continuation: in this thread's next-run slots if a runner is
    /// running here, else on the thread pool. Never runs it on this stack.
    /// </summary>
    internal static void Dispatch(IHandOff item)
    {
#if CSPNET_CONTROLLED
        if (ControlPoint.Hooks?.Dispatch(item) == true)
        {
            return;
        }
#endif

        if (Enabled && t_runner is { IsRunning: true } runner)
        {
            runner.Push(item);
            return;
        }

        // From outside a runner (a thread process, a timer, a first start): as before, the pool,
        // preferring this thread's local queue when this is a pool thread.
        ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: true);
    }

    /// <summary>
    /// Runs <paramref name="item"/>'s continuation from a thread-pool work item, then whatever it
    /// dispatched meanwhile: <see cref="IThreadPoolWorkItem.Execute"/> of every <see cref="IHandOff"/>.
    /// </summary>
    internal static void Run(IHandOff item)
    {
        if (!Enabled)
        {
            item.InvokeContinuation();
            return;
        }

        HandOffRunner runner = t_runner ??= HandOffRunner.ForCurrentThread();
        if (runner.IsRunning)
        {
            // Not reached today (nothing runs pool work items inline); if it were, running the
            // item here would nest one chain in another, so it waits its turn instead.
            runner.Push(item);
            return;
        }

        runner.Run(item);
    }

    /// <summary>
    /// The calling operation completed without parking (see <see cref="HandOffRunner.CompletedWithoutParking"/>):
    /// called before it wakes its own partner.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void CompletedWithoutParking()
    {
        if (t_runner is { IsRunning: true } runner)
        {
            runner.CompletedWithoutParking();
        }
    }

    /// <summary>Sends a continuation that must not wait for its thread any longer to the global queue.</summary>
    internal static void QueueToPool(IHandOff item) => ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: false);
}
