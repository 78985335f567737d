using System;
using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// Waiter for a blocking thread process. One instance per thread and item type is cached:
/// a thread is parked on at most one channel operation at a time, so the node can be reused
/// for every blocking operation that thread performs, allocation-free.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The event lives as long as its thread; ManualResetEventSlim waits on a monitor and owns no kernel handle unless WaitHandle is read, which this type never does.")]
internal sealed class SyncWaiter<T> : Waiter<T>
{
    [ThreadStatic]
    private static SyncWaiter<T>? t_cached;

    // ManualResetEventSlim spins briefly before it blocks in the kernel. On a rendezvous the
    // partner usually arrives within microseconds, so the short spin avoids a futex round trip;
    // it gives up quickly, so a long wait costs no CPU (no polling).
    private readonly ManualResetEventSlim _signal = new(false, SpinTuning.SyncWaiterSpinCount);

    private SyncWaiter()
    {
    }

    /// <summary>Returns this thread's waiter, reset and ready to be queued.</summary>
    internal static SyncWaiter<T> ForCurrentThread()
    {
        SyncWaiter<T> waiter = t_cached ??= new SyncWaiter<T>();
        waiter.ResetState();
        waiter._signal.Reset();
        return waiter;
    }

    internal override void Wake() => _signal.Set();

    /// <summary>Blocks until a partner has claimed and woken this waiter; rethrows poison.</summary>
    internal void WaitForPartner()
    {
        _signal.Wait();
        if (Error is { } error)
        {
            // Each parked party gets its own exception instance, so throwing it here is safe.
            throw error;
        }
    }
}
