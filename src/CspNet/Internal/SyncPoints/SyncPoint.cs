using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Processes;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>
/// Shared engine of <see cref="Barrier"/> and <see cref="Bucket"/> (see <see cref="BarrierCore"/>
/// and <see cref="BucketCore"/>): processes arrive and either
/// pass at once or park until released. Thread and async processes park in the same queue, on the
/// same waiter types as channels use.
/// </summary>
/// <remarks>
/// One lock guards the queue and the subclass's counters. Cancellation of a parked async process
/// happens under that lock too (<see cref="TryCancel"/>), so a process is never both counted as
/// arrived and cancelled: a cancelled sync did not take part in the barrier phase.
/// </remarks>
internal abstract class SyncPoint : IWaiterOwner<bool>
{
    private WaiterQueue<bool> _parked;
    private object? _asyncWaiters; // see WaiterCache

    /// <summary>Guards all state of the sync point and its subclass.</summary>
    protected Lock Gate { get; } = new();

    /// <summary>Whether the object is poisoned. Read and written under <see cref="Gate"/>.</summary>
    protected bool Poisoned { get; private set; }

    /// <summary>Number of processes parked now. Read under <see cref="Gate"/>.</summary>
    protected int ParkedCount { get; private set; }

    /// <summary>Name used in exception messages.</summary>
    protected abstract string Kind { get; }

    /// <summary>The public blocking arrival, for the error when it is called in an async process: <c>"Sync()"</c>.</summary>
    protected abstract string BlockingCall { get; }

    /// <summary>The public async arrival to use instead: <c>"SyncAsync()"</c>.</summary>
    protected abstract string AsyncTwin { get; }

    /// <summary>
    /// Called under <see cref="Gate"/> when a process arrives. Returns true if it must park;
    /// false if it passes, in which case <paramref name="released"/> may hold parked processes
    /// to wake (outside the lock). May throw to reject a misuse.
    /// </summary>
    protected abstract bool ArriveLocked(out Waiter<bool>? released);

    /// <summary>Called under <see cref="Gate"/> after a parked process was cancelled and removed.</summary>
    protected virtual void OnCancelledLocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "Called under the gate.");
    }

    /// <summary>Blocking arrival.</summary>
    internal void Arrive()
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess(BlockingCall, AsyncTwin);
        SyncWaiter<bool> waiter;
        Waiter<bool>? released;
        ControlPoint.BeforeLock(Gate);
        lock (Gate)
        {
            ThrowIfPoisonedLocked();
            if (!ArriveLocked(out released))
            {
                goto Passed;
            }

            waiter = SyncWaiter<bool>.ForCurrentThread(this);
            Enqueue(waiter);
        }

        waiter.WaitForPartner();
        return;

    Passed:
        WakeAll(released);
    }

    /// <summary>
    /// Async arrival: parks no thread. Every failure (poison, cancellation, misuse rejected by
    /// <see cref="ArriveLocked"/>) is reported through the returned task, never thrown.
    /// </summary>
    internal ValueTask ArriveAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        AsyncWaiter<bool> waiter = WaiterCache.Rent<bool>(ref _asyncWaiters, isReader: false);
        if (cancellationToken.CanBeCanceled)
        {
            // Before the waiter is queued: see AsyncWaiter.RegisterCancellation.
            waiter.RegisterCancellation(this, cancellationToken);
        }

        Waiter<bool>? released;
        InvalidOperationException rejection;
        ControlPoint.BeforeLock(Gate);
        lock (Gate)
        {
            if (Poisoned)
            {
                goto Poisoned;
            }

            if (waiter.State != Waiter<bool>.Pending)
            {
                // Cancelled before it arrived: it takes no part, and the task reports the cancellation.
                return waiter.AsWriteTask();
            }

            try
            {
                if (!ArriveLocked(out released))
                {
                    goto Passed;
                }
            }
            catch (InvalidOperationException e)
            {
                // Rejected (misuse): the waiter must be released, but outside the lock, because
                // disposing its registration waits for a running callback that needs the lock.
                rejection = e;
                goto Rejected;
            }

            Enqueue(waiter);
            return waiter.AsWriteTask();
        }

    Rejected:
        // Misuse is reported through the returned task, as poison and cancellation are.
        waiter.Discard();
        return ValueTask.FromException(rejection);

    Poisoned:
        waiter.Discard();
        return ValueTask.FromException(NewPoisonException());

    Passed:
        waiter.Discard();
        WakeAll(released);
        return default;
    }

    /// <summary>Poisons the object: parked and later arrivals fail with <see cref="PoisonException"/>.</summary>
    public void Poison()
    {
        Waiter<bool>? parked;
        ControlPoint.BeforeLock(Gate);
        lock (Gate)
        {
            if (Poisoned)
            {
                return;
            }

            Poisoned = true;
            parked = ReleaseAllLocked();
        }

        while (parked is { } waiter)
        {
            parked = waiter.Next;
            waiter.Next = null;
            waiter.Error = NewPoisonException();
            waiter.Wake();
        }
    }

    /// <summary>Claims every parked process for release; wake them with <see cref="WakeAll"/> outside the lock.</summary>
    protected Waiter<bool>? ReleaseAllLocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "Called under the gate.");
        ParkedCount = 0;
        return _parked.DetachAllClaimed();
    }

    /// <summary>Wakes a chain returned by <see cref="ReleaseAllLocked"/>; returns how many were woken.</summary>
    protected static int WakeAll(Waiter<bool>? chain)
    {
        int count = 0;
        while (chain is { } waiter)
        {
            chain = waiter.Next;
            waiter.Next = null;
            waiter.Wake();
            count++;
        }

        return count;
    }

    /// <summary>Throws if poisoned. Call under <see cref="Gate"/>.</summary>
    protected void ThrowIfPoisonedLocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "Called under the gate.");
        if (Poisoned)
        {
            throw NewPoisonException();
        }
    }

    /// <inheritdoc />
    public bool TryCancel(Waiter<bool> waiter)
    {
        ControlPoint.BeforeLock(Gate);
        lock (Gate)
        {
            if (!_parked.TryCancel(waiter, out bool wasQueued))
            {
                return false;
            }

            if (wasQueued)
            {
                ParkedCount--;
                Debug.Assert(ParkedCount >= 0, "Parked count never goes negative.");
                OnCancelledLocked();
            }

            return true;
        }
    }

    private void Enqueue(Waiter<bool> waiter)
    {
        _parked.Enqueue(waiter, isReader: false);
        ParkedCount++;
    }

    private PoisonException NewPoisonException() =>
        new($"The {Kind} has been poisoned: no process can synchronise on it any more.");
}
