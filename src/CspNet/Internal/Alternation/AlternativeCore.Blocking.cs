using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Processes;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>The blocking driver of a selection: the owner is a thread, parked on an event.</summary>
internal sealed partial class AlternativeCore
{
    private ManualResetEventSlim? _event;
    private ThreadInterruptedException? _interrupted;

    internal int Select(int start, bool[]? preconditions)
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Select()", "SelectAsync()");
        Begin(start, preconditions);
        _event ??= new ManualResetEventSlim(false, SpinTuning.SyncWaiterSpinCount);
        try
        {
            while (true)
            {
                if (ScanBlocking() is int decided)
                {
                    return decided;
                }

                EnableAll();
                int outcome = WaitBlocking(_event);
                if (_interrupted is { } interrupt)
                {
                    return EndInterrupted(interrupt, outcome);
                }

                if (outcome >= 0)
                {
                    return Finish(outcome);
                }

                if (outcome == EndedByFailure)
                {
                    ThrowFailure();
                }
            }
        }
        catch
        {
            Abandon();
            throw;
        }
    }

    /// <summary>Scans, reserving signalled asynchronous guards in their turn; returns the chosen index, or null if nothing was ready.</summary>
    private int? ScanBlocking()
    {
        BeginScan();
        int visited = 0;
        while (true)
        {
            switch (Scan(ref visited, out int index))
            {
                case ScanStep.Committed:
                    return Finish(index);
                case ScanStep.NothingReady:
                    return null;
            }

            ReserveBlocking(index);
            int state = Volatile.Read(ref _state);
            int outcome = state >= DoneBase ? state - DoneBase : Undecided;
            if (_interrupted is { } interrupt)
            {
                return EndInterrupted(interrupt, outcome);
            }

            if (outcome >= 0)
            {
                return Finish(outcome);
            }

            if (state == Failed)
            {
                ThrowFailure();
            }
        }
    }

    /// <summary>
    /// An interrupt (<see cref="Thread.Interrupt"/>) ended the wait. If a guard committed meanwhile
    /// its value is not lost: the selection returns it and the interrupt is raised again, to
    /// surface at the thread's next blocking call. Otherwise nothing was taken and the interrupt
    /// propagates.
    /// </summary>
    private int EndInterrupted(ThreadInterruptedException interrupt, int outcome)
    {
        _interrupted = null;
        if (outcome >= 0)
        {
            Thread.CurrentThread.Interrupt();
            return Finish(outcome);
        }

        End();
        System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(interrupt);
        return -1;
    }

    /// <summary>Waits with the guards enabled until the selection is decided or a new scan is due; returns <see cref="DisableAll"/>'s outcome.</summary>
    private int WaitBlocking(ManualResetEventSlim signal)
    {
        while (Volatile.Read(ref _state) == Selecting && _interrupted is null)
        {
            int reservable = TakeAsyncSignal();
            if (reservable >= 0)
            {
                ReserveBlocking(reservable);
                continue;
            }

            if (RescanDue())
            {
                break;
            }

            signal.Reset();
            if (TryPark(out bool wakeOwed))
            {
                ParkBlocking(signal);
            }
            else if (wakeOwed)
            {
                WaitForOwedWake(signal);
            }
        }

        return DisableAll();
    }

    private void ParkBlocking(ManualResetEventSlim signal)
    {
        bool counted = CoreMetrics.EnterParked(CoreMetrics.ThreadKind);
        try
        {
            ParkBlockingCore(signal);
        }
        finally
        {
            if (counted)
            {
                CoreMetrics.LeaveParked(CoreMetrics.ThreadKind);
            }
        }
    }

    private void ParkBlockingCore(ManualResetEventSlim signal)
    {
        long deadline = EarliestDeadline();
        try
        {
            ControlPoint.BeforePark(signal);
            bool woken = deadline == long.MaxValue
                ? signal.Wait(Timeout.Infinite)
                : signal.Wait(MonotonicClock.WaitMilliseconds(deadline));
            if (!woken && LeaveWaitingAfterTimeout())
            {
                WaitForOwedWake(signal);
            }
        }
        catch (ThreadInterruptedException interrupt)
        {
            _interrupted = interrupt;
            if (LeaveWaitingAfterTimeout())
            {
                WaitForOwedWake(signal);
            }
        }
    }

    /// <summary>Someone moved the state out of Waiting and will set the event: wait for it, whatever interrupts arrive.</summary>
    private void WaitForOwedWake(ManualResetEventSlim signal)
    {
        while (true)
        {
            try
            {
                ControlPoint.BeforePark(signal);
                signal.Wait();
                return;
            }
            catch (ThreadInterruptedException interrupt)
            {
                _interrupted ??= interrupt;
            }
        }
    }

    private void ReserveBlocking(int index)
    {
        CancellationTokenSource source = StartReserve(index);
        bool reserved = false;
        try
        {
            ValueTask<bool> attempt = _guards[index].TryReserveAsync(_sites[index], source.Token);
            reserved = attempt.IsCompletedSuccessfully ? attempt.Result : AwaitReservation(attempt.AsTask(), source);
        }
        catch (System.OperationCanceledException) when (source.IsCancellationRequested)
        {
        }
#pragma warning disable CA1031 // The guard's exception fails the selection and is thrown by it.
        catch (System.Exception e)
#pragma warning restore CA1031
        {
            Fail(e);
        }
        finally
        {
            EndReserve();
        }

        SettleReservation(index, reserved);
    }

    /// <summary>
    /// Blocks until a reservation answers. An interrupt cancels it but still waits for the answer,
    /// so that a reservation made meanwhile is confirmed or released, never abandoned.
    /// </summary>
    private bool AwaitReservation(Task<bool> attempt, CancellationTokenSource source)
    {
        while (true)
        {
            try
            {
                // A thread process's selection is synchronous by contract, and a remote guard's
                // reservation is async work: this is the one place it is waited for.
#pragma warning disable RS0030
                return attempt.GetAwaiter().GetResult();
#pragma warning restore RS0030
            }
            catch (ThreadInterruptedException interrupt) when (!attempt.IsCompleted)
            {
                _interrupted ??= interrupt;
                source.Cancel();
            }
        }
    }

    private void WakeOwner()
    {
        if (_asyncMode)
        {
            _asyncCore.SetResult(true, this);
        }
        else
        {
            _event!.Set();
        }

        ControlPoint.AfterWake();
    }
}
