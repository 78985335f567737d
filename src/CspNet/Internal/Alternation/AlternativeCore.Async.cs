using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>The async driver of a selection: the owner holds no thread while it waits.</summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The timer is disarmed after every wait, which takes it out of the runtime's timer queue; it then holds nothing that needs disposing.")]
internal sealed partial class AlternativeCore : IHandOff
{
    private static readonly TimerCallback s_onTimer = static state => ((AlternativeCore)state!).OnTimer();
    private static readonly Action<object?> s_onCancel = static state => ((AlternativeCore)state!).OnCancel();

    // Its continuation goes to the hand-off (see HandOff): the owner runs next on the thread that woke it.
    private ContinuationCore<bool> _asyncCore;
    private Timer? _timer;
    private bool _asyncMode;

    // Pooled builder: a selection that waits would otherwise allocate its state machine each time.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    internal async ValueTask<int> SelectAsync(int start, bool[]? preconditions, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Begin(start, preconditions);
        _asyncMode = true;
        CancellationTokenRegistration registration = default;
        try
        {
            if (cancellationToken.CanBeCanceled && _anyAsynchronous)
            {
                // A reservation in the scan may take a round trip: let a cancellation reach it.
                registration = cancellationToken.UnsafeRegister(s_onCancel, this);
            }

            while (true)
            {
                BeginScan();
                int visited = 0;
                ScanStep step;
                int index;
                while ((step = Scan(ref visited, out index)) == ScanStep.Reserve)
                {
                    await ReserveAsync(index, cancellationToken).ConfigureAwait(false);
                    int state = Volatile.Read(ref _state);
                    if (state >= DoneBase)
                    {
                        return Finish(state - DoneBase);
                    }

                    if (state == Failed)
                    {
                        ThrowFailure();
                    }

                    if (cancellationToken.IsCancellationRequested)
                    {
                        End();
                        throw new OperationCanceledException(cancellationToken);
                    }
                }

                if (step == ScanStep.Committed)
                {
                    return Finish(index);
                }

                EnableAll();
                if (cancellationToken.CanBeCanceled && registration == default)
                {
                    registration = cancellationToken.UnsafeRegister(s_onCancel, this);
                }

                int outcome = await WaitAsync(cancellationToken).ConfigureAwait(false);
                switch (outcome)
                {
                    case >= 0:
                        return Finish(outcome);
                    case EndedByFailure:
                        ThrowFailure();
                        break;
                    case EndedByCancellation:
                        End();
                        throw new OperationCanceledException(cancellationToken);
                }
            }
        }
        catch
        {
            Abandon();
            throw;
        }
        finally
        {
            // Waits out a callback already running, so none can touch a later selection.
            await registration.DisposeAsync().ConfigureAwait(false);
            _asyncMode = false;
        }
    }

    private async ValueTask<int> WaitAsync(CancellationToken cancellationToken)
    {
        while (Volatile.Read(ref _state) == Selecting)
        {
            if (cancellationToken.IsCancellationRequested)
            {
                Interlocked.CompareExchange(ref _state, Cancelled, Selecting);
                continue;
            }

            int reservable = TakeAsyncSignal();
            if (reservable >= 0)
            {
                await ReserveAsync(reservable, cancellationToken).ConfigureAwait(false);
                continue;
            }

            if (RescanDue())
            {
                break;
            }

            _asyncCore.Reset();
            if (TryPark(out bool wakeOwed))
            {
                if (cancellationToken.IsCancellationRequested)
                {
                    // The registration may have fired before we parked, finding nobody to wake.
                    OnCancel();
                }

                ArmTimer(EarliestDeadline());
                bool counted = CoreMetrics.EnterParked(CoreMetrics.AsyncKind);
                try
                {
                    await new ValueTask<bool>(this, _asyncCore.Version).ConfigureAwait(false);
                }
                finally
                {
                    if (counted)
                    {
                        CoreMetrics.LeaveParked(CoreMetrics.AsyncKind);
                    }
                }

                DisarmTimer();
            }
            else if (wakeOwed)
            {
                await new ValueTask<bool>(this, _asyncCore.Version).ConfigureAwait(false);
            }
        }

        return DisableAll();
    }

    private async ValueTask ReserveAsync(int index, CancellationToken cancellationToken)
    {
        CancellationTokenSource source = StartReserve(index);
        if (cancellationToken.IsCancellationRequested)
        {
            // Cancelled between the caller's last check and the source's publication.
            source.Cancel();
        }

        bool reserved = false;
        try
        {
            reserved = await _guards[index].TryReserveAsync(_sites[index], source.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (source.IsCancellationRequested)
        {
        }
#pragma warning disable CA1031 // The guard's exception fails the selection and is thrown by it.
        catch (Exception e)
#pragma warning restore CA1031
        {
            Fail(e);
        }
        finally
        {
            EndReserve();
        }

        if (reserved && cancellationToken.IsCancellationRequested)
        {
            // The caller gave up while the reservation was on its way: give it back, so that a
            // cancelled selection has taken nothing.
            _guards[index].Release(_sites[index]);
            reserved = false;
        }

        SettleReservation(index, reserved);
    }

    private void ArmTimer(long deadline)
    {
        if (deadline == long.MaxValue)
        {
            return;
        }

        if (_timer is null)
        {
            // The timer must not capture the caller's ExecutionContext (it would keep it alive).
            using (ExecutionContext.SuppressFlow())
            {
                _timer = new Timer(s_onTimer, this, Timeout.Infinite, Timeout.Infinite);
            }
        }

        _timer.Change(MonotonicClock.WaitMilliseconds(deadline), Timeout.Infinite);
    }

    // A disarmed timer is out of the runtime's timer queue, so it no longer roots this alternative.
    private void DisarmTimer() => _timer?.Change(Timeout.Infinite, Timeout.Infinite);

    private void OnTimer()
    {
        if (Volatile.Read(ref _state) == Waiting && Interlocked.CompareExchange(ref _state, Selecting, Waiting) == Waiting)
        {
            WakeOwner();
        }
    }

    private void OnCancel()
    {
        if (Volatile.Read(ref _state) == Waiting && Interlocked.CompareExchange(ref _state, Cancelled, Waiting) == Waiting)
        {
            WakeOwner();
        }
        else
        {
            CancelPendingReserve();
        }
    }

    bool IValueTaskSource<bool>.GetResult(short token) => _asyncCore.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<bool>.GetStatus(short token) => _asyncCore.GetStatus(token);

    void IValueTaskSource<bool>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _asyncCore.OnCompleted(continuation, state, token, flags, this);

    void IHandOff.InvokeContinuation() => _asyncCore.InvokeContinuation();

    void IThreadPoolWorkItem.Execute() => HandOff.Run(this);
}
