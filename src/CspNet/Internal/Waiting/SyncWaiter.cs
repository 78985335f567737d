using System;
using System.Threading;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>
/// Waiter for a blocking thread process. One instance per thread and item type is cached:
/// a thread is parked on at most one channel operation at a time, so the node can be reused
/// for every blocking operation that thread performs, allocation-free.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The event lives as long as its thread; ManualResetEventSlim waits on a monitor and owns no kernel handle unless WaitHandle is read, which this type never does.")]
internal sealed class SyncWaiter<T> : Waiter<T>
{
    internal override Exception? Error { get; set; }

    [ThreadStatic]
    private static SyncWaiter<T>? t_cached;

    // ManualResetEventSlim spins briefly before it blocks in the kernel. On a rendezvous the
    // partner usually arrives within microseconds, so the short spin avoids a futex round trip;
    // it gives up quickly, so a long wait costs no CPU (no polling).
    private readonly ManualResetEventSlim _signal = new(false, SpinTuning.SyncWaiterSpinCount);
    private IWaiterOwner<T>? _owner;

    // Set before the owner is asked to cancel, so that a hold releasing this (claimed) waiter
    // under the owner's lock sees it and completes the interrupt rather than parking it again.
    private volatile bool _interrupted;

    private SyncWaiter()
    {
    }

    /// <summary>Returns this thread's waiter, reset and ready to be queued on <paramref name="owner"/>.</summary>
    internal static SyncWaiter<T> ForCurrentThread(IWaiterOwner<T> owner)
    {
        SyncWaiter<T> waiter = t_cached ??= new SyncWaiter<T>();
        waiter.ResetState();
        waiter._signal.Reset();
        waiter._owner = owner;
        waiter._interrupted = false;
        return waiter;
    }

    internal override void Wake()
    {
        _signal.Set();
        ControlPoint.AfterWake();
    }

    internal override bool CancellationRequested => _interrupted;

    internal override Exception CreateCancellation() => new ThreadInterruptedException("The thread was interrupted while its write was set aside for a remote selection, which then gave it back: nothing was delivered.");

    /// <summary>
    /// Blocks until a partner has claimed and woken this waiter; rethrows poison.
    /// </summary>
    /// <remarks>
    /// <see cref="Thread.Interrupt"/> while parked: if the waiter can still be cancelled, nothing was
    /// taken or delivered and <see cref="ThreadInterruptedException"/> propagates. If a partner has
    /// claimed it already, the operation has happened: the wait finishes (the partner's wake is on
    /// its way), the result is returned, and the interrupt is raised again so that it surfaces at
    /// the thread's next blocking call. A value that was taken is never lost to an interrupt.
    /// </remarks>
    internal void WaitForPartner()
    {
        bool counted = CoreMetrics.EnterParked(CoreMetrics.ThreadKind);
        try
        {
            WaitForPartnerCore();
        }
        finally
        {
            if (counted)
            {
                CoreMetrics.LeaveParked(CoreMetrics.ThreadKind);
            }
        }
    }

    private void WaitForPartnerCore()
    {
        try
        {
            ControlPoint.BeforePark(_signal);
            _signal.Wait();
        }
        catch (ThreadInterruptedException) when (MarkInterrupted() && _owner!.TryCancel(this))
        {
            _owner = null;
            throw;
        }
        catch (ThreadInterruptedException)
        {
            WaitUninterruptibly();
            if (Error is ThreadInterruptedException)
            {
                // A hold had set this write aside and gave it back: the interrupt is the outcome
                // (nothing was delivered), not something to raise again later.
                _owner = null;
                throw Error;
            }

            Thread.CurrentThread.Interrupt();
        }

        _owner = null;
        if (Error is { } error)
        {
            // Each parked party gets its own exception instance, so throwing it here is safe.
            throw error;
        }
    }

    private bool MarkInterrupted()
    {
        _interrupted = true;
        return true;
    }

    private void WaitUninterruptibly()
    {
        while (true)
        {
            try
            {
                ControlPoint.BeforePark(_signal);
                _signal.Wait();
                return;
            }
            catch (ThreadInterruptedException)
            {
                // Claimed already: the wake is on its way. Interrupted again meanwhile; the
                // interrupt is raised again by the caller either way.
            }
        }
    }
}
