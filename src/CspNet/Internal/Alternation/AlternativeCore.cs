using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using CspNet.Alternation;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>
/// The engine of an <see cref="Alternative"/>: drives its guards through the guard contract
/// (<see cref="Guard"/>) and parks the selecting process, thread or async.
/// </summary>
/// <remarks>
/// <para>
/// A selection: <b>prepare</b> every considered guard; <b>scan</b> them in selection order with
/// <see cref="Guard.TryCommit"/> (nothing is enabled, so nobody else can commit the selection);
/// if none is ready, <b>enable</b> them all and <b>wait</b> until a guard claims the selection
/// for a partner (<see cref="GuardSite.TryClaim"/>), signals (<see cref="GuardSite.Signal"/>), fails
/// it, a timer deadline passes, or the caller cancels; then <b>disable</b> them all and either
/// finish with the claimed guard or scan again. A signalling guard that commits asynchronously is
/// tried (<see cref="Guard.TryReserveAsync"/>) while the others stay enabled.
/// </para>
/// <para>
/// The state word decides every race with one compare-and-swap: <c>Idle</c> between selections;
/// <c>Selecting</c> while the owner works; <c>Waiting</c> while it is parked; <c>Cancelled</c>
/// and <c>Failed</c> once the caller or a guard ended the wait; <c>DoneBase + i</c> once guard
/// <c>i</c> committed. Partners claim only from <c>Selecting</c> or <c>Waiting</c>, and only
/// through waiters that exist between enable and disable; whoever moves the state out of
/// <c>Waiting</c> wakes the owner, exactly once.
/// </para>
/// <para>
/// Subscriptions live exactly as long as one wait: a channel holds an alternation's waiter only
/// between enable and disable, so nothing accumulates across selections, and a write claims at
/// most one alternation.
/// </para>
/// </remarks>
[DebuggerDisplay("{DebuggerDisplay,nq}")]
internal sealed partial class AlternativeCore : IValueTaskSource<bool>
{
    private const int Idle = 0;
    private const int Selecting = 1;
    private const int Waiting = 2;
    private const int Cancelled = 3;
    private const int Failed = 4;
    private const int DoneBase = 16;

    // DisableAll's answers besides a chosen index.
    private const int Undecided = -1;
    private const int EndedByFailure = -2;
    private const int EndedByCancellation = -3;

    private readonly Guard[] _guards;
    private readonly GuardSlot[] _sites;
    private readonly int[] _deadlineGuards;
    private readonly bool[] _commitsAsynchronously;
    private readonly bool[] _enabled;
    private readonly ulong[] _signals;
    private int _state;
    private int _last = -1;
    private int _wakeOwnerPending;
    private Exception? _failure;
    private CancellationTokenSource? _pendingReserve;
    private int _reserving = -1;
    private readonly ulong[] _asynchronousMask;
    private readonly bool _anyAsynchronous;
    private readonly int[] _changingCapabilities; // guards whose Capabilities are read again at every scan

    // Per selection.
    private bool[]? _preconditions;
    private int _start;

    internal AlternativeCore(Guard[] guards)
    {
        _guards = guards;
        _sites = new GuardSlot[guards.Length];
        _enabled = new bool[guards.Length];
        _commitsAsynchronously = new bool[guards.Length];
        _signals = new ulong[(guards.Length + 63) >> 6];
        _asynchronousMask = new ulong[_signals.Length];
        var deadlines = new List<int>();
        for (int i = 0; i < guards.Length; i++)
        {
            _sites[i] = new GuardSlot(this, i);
            GuardCapabilities capabilities = guards[i].Capabilities;
            if ((capabilities & GuardCapabilities.Deadline) != 0)
            {
                deadlines.Add(i);
            }

            _commitsAsynchronously[i] = (capabilities & GuardCapabilities.CommitsAsynchronously) != 0;
            if (_commitsAsynchronously[i])
            {
                _asynchronousMask[i >> 6] |= 1UL << i;
            }
        }

        _deadlineGuards = [.. deadlines];
        var changing = new List<int>();
        for (int i = 0; i < guards.Length; i++)
        {
            if (guards[i].CapabilitiesChange)
            {
                changing.Add(i);
            }
        }

        _changingCapabilities = [.. changing];

        // A guard that may come to commit asynchronously needs the asynchronous bookkeeping from the start.
        _anyAsynchronous = Array.IndexOf(_commitsAsynchronously, true) >= 0 || _changingCapabilities.Length > 0;
    }

    internal int Count => _guards.Length;

    internal int LastSelected => _last;

    /// <summary>Whether a selection is under way; channel ends keep it to detect two selections on one end.</summary>
    internal SelectionActivity Activity { get; } = new();

    // ---- the site calls (any thread) ----------------------------------------------------------

    internal void Signal(int index)
    {
        Interlocked.Or(ref _signals[index >> 6], 1UL << index);
        if (Volatile.Read(ref _state) == Waiting && Interlocked.CompareExchange(ref _state, Selecting, Waiting) == Waiting)
        {
            WakeOwner();
        }
    }

    internal bool TryClaim(int index)
    {
        // Only an enabled guard may commit the selection: a site kept from an earlier selection,
        // or of a guard this selection does not consider, cannot.
        if (!Volatile.Read(ref _enabled[index]))
        {
            return false;
        }

        while (true)
        {
            int state = Volatile.Read(ref _state);
            if (state != Selecting && state != Waiting)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _state, DoneBase + index, state) == state)
            {
                if (state == Waiting)
                {
                    Volatile.Write(ref _wakeOwnerPending, 1);
                }

                return true;
            }
        }
    }

    internal void WakeAfterClaim()
    {
        if (Interlocked.Exchange(ref _wakeOwnerPending, 0) == 1)
        {
            WakeOwner();
        }
        else if (Volatile.Read(ref _state) >= DoneBase)
        {
            // Claimed while the owner was trying an asynchronous guard: that attempt is not wanted.
            CancelPendingReserve();
        }
    }

    /// <summary>A guard's <see cref="GuardSite.Fail"/>: counts only while the guard is enabled or being reserved.</summary>
    internal void Fail(int index, Exception error)
    {
        if (Volatile.Read(ref _enabled[index]) || Volatile.Read(ref _reserving) == index)
        {
            Fail(error);
        }
    }

    internal void Fail(Exception error)
    {
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if (state != Selecting && state != Waiting)
            {
                return;
            }

            Volatile.Write(ref _failure, error);
            if (Interlocked.CompareExchange(ref _state, Failed, state) == state)
            {
                if (state == Waiting)
                {
                    WakeOwner();
                }
                else
                {
                    CancelPendingReserve();
                }

                return;
            }
        }
    }

    private void CancelPendingReserve() => Volatile.Read(ref _pendingReserve)?.Cancel();

    // ---- the steps of a selection (owner only) ------------------------------------------------

    /// <summary>Starts a selection: claims the alternative and prepares every considered guard.</summary>
    private void Begin(int start, bool[]? preconditions)
    {
        if (preconditions is not null && preconditions.Length != _guards.Length)
        {
            throw new ArgumentException(
                $"There are {preconditions.Length} preconditions for {_guards.Length} guards; pass one precondition per guard, in the same order.",
                nameof(preconditions));
        }

        if (Interlocked.CompareExchange(ref _state, Selecting, Idle) != Idle)
        {
            ThrowHelper.ThrowAlreadySelecting();
        }

        _preconditions = preconditions;
        _start = start;
        Activity.Set(true);
        try
        {
            bool anyConsidered = false;
            bool anyCanBeReady = false;
            for (int i = 0; i < _guards.Length; i++)
            {
                if (Considered(i))
                {
                    anyConsidered = true;
                    anyCanBeReady |= _guards[i].Prepare(_sites[i]);
                }
            }

            if (!anyConsidered)
            {
                throw new InvalidOperationException("Every precondition is false, so no guard could ever be chosen and the select would wait forever.");
            }

            if (!anyCanBeReady)
            {
                ThrowHelper.ThrowNeverReady();
            }
        }
        catch
        {
            End();
            throw;
        }
    }

    private bool Considered(int i) => _preconditions is null || _preconditions[i];

    /// <summary>What one step of a scan found.</summary>
    private enum ScanStep
    {
        NothingReady,
        Committed,
        Reserve,
    }

    /// <summary>Starts a scan: signals of synchronous guards that arrived before it are answered by it.</summary>
    private void BeginScan()
    {
        foreach (int i in _changingCapabilities)
        {
            // Owner only, like every reader of these: a signal that arrived under the old
            // capabilities is answered by this scan either way.
            bool asynchronous = (_guards[i].Capabilities & GuardCapabilities.CommitsAsynchronously) != 0;
            _commitsAsynchronously[i] = asynchronous;
            ulong bit = 1UL << i;
            _asynchronousMask[i >> 6] = asynchronous ? _asynchronousMask[i >> 6] | bit : _asynchronousMask[i >> 6] & ~bit;
        }

        if (!_anyAsynchronous)
        {
            Array.Clear(_signals);
            return;
        }

        for (int word = 0; word < _signals.Length; word++)
        {
            Interlocked.And(ref _signals[word], _asynchronousMask[word]);
        }
    }

    /// <summary>
    /// Goes on with a scan, in selection order, from the <paramref name="visited"/>-th guard:
    /// commits the first ready guard, or stops at an asynchronous guard that has signalled (it is
    /// ready as far as it knows, and is reserved in its place in the order). Nothing is enabled
    /// meanwhile, so nobody but the owner can commit the selection.
    /// </summary>
    private ScanStep Scan(ref int visited, out int index)
    {
        int n = _guards.Length;
        for (; visited < n; visited++)
        {
            int i = _start + visited;
            if (i >= n)
            {
                i -= n;
            }

            if (!Considered(i))
            {
                continue;
            }

            if (_guards[i].TryCommit(_sites[i]))
            {
                // An exchange, not a compare: a guard's Fail that raced with this commit loses to
                // it, because the commit has taken its value already.
                Interlocked.Exchange(ref _state, DoneBase + i);
                index = i;
                return ScanStep.Committed;
            }

            if (_commitsAsynchronously[i] && TakeSignal(i))
            {
                visited++;
                index = i;
                return ScanStep.Reserve;
            }
        }

        index = Undecided;
        return ScanStep.NothingReady;
    }

    private bool TakeSignal(int i)
    {
        ulong bit = 1UL << i;
        return (Interlocked.And(ref _signals[i >> 6], ~bit) & bit) != 0;
    }

    /// <summary>Enables the considered guards in selection order; stops early once the selection is decided.</summary>
    private void EnableAll()
    {
        int n = _guards.Length;
        for (int k = 0, i = _start; k < n; k++, i = i + 1 == n ? 0 : i + 1)
        {
            if (!Considered(i))
            {
                continue;
            }

            // Enabled before the call: the guard may claim from inside Enable, or a partner may
            // claim as soon as its waiter is parked.
            Volatile.Write(ref _enabled[i], true);
            _guards[i].Enable(_sites[i]);
            if (Volatile.Read(ref _state) != Selecting)
            {
                return;
            }
        }
    }

    /// <summary>
    /// Disables every enabled guard, then reads the outcome: the chosen index, or
    /// <see cref="Undecided"/> (state back to Selecting), <see cref="EndedByFailure"/> or
    /// <see cref="EndedByCancellation"/>. Once the guards are disabled nobody can change the state.
    /// </summary>
    private int DisableAll()
    {
        ControlPoint.BeforeStateChange();
        Exception? error = null;
        for (int i = 0; i < _guards.Length; i++)
        {
            if (_enabled[i])
            {
                Volatile.Write(ref _enabled[i], false);
                try
                {
                    _guards[i].Disable(_sites[i]);
                }
#pragma warning disable CA1031 // Kept and rethrown once every guard is disabled.
                catch (Exception e)
#pragma warning restore CA1031
                {
                    error ??= e;
                }
            }
        }

        // A waiting state can only be left by its waker, who wakes the owner: never here.
        Debug.Assert(Volatile.Read(ref _state) != Waiting, "Guards are disabled only by a running owner.");
        if (error is not null)
        {
            Fail(error);
        }

        int state = Volatile.Read(ref _state);
        switch (state)
        {
            case >= DoneBase:
                return state - DoneBase;
            case Failed:
                return EndedByFailure;
            case Cancelled:
                return EndedByCancellation;
            default:
                Volatile.Write(ref _state, Selecting);
                return Undecided;
        }
    }

    /// <summary>Confirms the chosen guard and ends the selection.</summary>
    private int Finish(int chosen)
    {
        // A selection that returns is an operation that did not park (again): see HandOff.
        HandOff.CompletedWithoutParking();
        _last = chosen;
        CoreMetrics.CountSelection();
        try
        {
            _guards[chosen].Confirm(_sites[chosen]);
        }
        finally
        {
            End();
        }

        return chosen;
    }

    /// <summary>Ends a selection that failed: throws the guard's exception.</summary>
    private void ThrowFailure()
    {
        Exception failure = Interlocked.Exchange(ref _failure, null)!;
        End();
        System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
    }

    private void End()
    {
        _preconditions = null;
        _failure = null;
        Activity.Set(false);
        AssertInvariants();
        Volatile.Write(ref _state, Idle);
    }

    /// <summary>The next signalled guard that commits asynchronously, in selection order; its signal is consumed.</summary>
    private int TakeAsyncSignal()
    {
        if (!_anyAsynchronous)
        {
            return -1;
        }

        int n = _guards.Length;
        for (int k = 0, i = _start; k < n; k++, i = i + 1 == n ? 0 : i + 1)
        {
            if (_commitsAsynchronously[i] && _enabled[i] && TakeSignal(i))
            {
                return i;
            }
        }

        return -1;
    }

    /// <summary>Whether a guard that commits synchronously signalled, or a deadline passed: either way a new scan is due.</summary>
    private bool RescanDue()
    {
        for (int word = 0; word < _signals.Length; word++)
        {
            ulong bits = Volatile.Read(ref _signals[word]);
            while (bits != 0)
            {
                int i = (word << 6) + System.Numerics.BitOperations.TrailingZeroCount(bits);
                bits &= bits - 1;
                if (!_commitsAsynchronously[i])
                {
                    return true;
                }
            }
        }

        long deadline = EarliestDeadline();
        return deadline != long.MaxValue && Stopwatch.GetTimestamp() >= deadline;
    }

    /// <summary>Whether an asynchronous guard has a signal pending.</summary>
    private bool AsyncSignalPending()
    {
        if (!_anyAsynchronous)
        {
            return false;
        }

        for (int i = 0; i < _guards.Length; i++)
        {
            if (_commitsAsynchronously[i] && _enabled[i] && (Volatile.Read(ref _signals[i >> 6]) & (1UL << i)) != 0)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Moves to Waiting unless something is already due. Returns false if the owner must not park
    /// (decided, or due): then the state is not Waiting.
    /// </summary>
    private bool TryPark(out bool wakeOwed)
    {
        wakeOwed = false;
        ControlPoint.BeforeStateChange();
        if (Interlocked.CompareExchange(ref _state, Waiting, Selecting) != Selecting)
        {
            return false;
        }

        // A signal set before the CAS above may have seen Selecting and not woken us: look again.
        if (AsyncSignalPending() || RescanDue())
        {
            if (Interlocked.CompareExchange(ref _state, Selecting, Waiting) != Waiting)
            {
                // Someone else moved us on meanwhile; their wake is on its way and must be consumed.
                wakeOwed = true;
            }

            return false;
        }

        return true;
    }

    /// <summary>After a wait that timed out: leaves Waiting, unless a waker got there first (then its wake is owed).</summary>
    private bool LeaveWaitingAfterTimeout() => Interlocked.CompareExchange(ref _state, Selecting, Waiting) != Waiting;

    /// <summary>The outcome of a reservation: finish with it, or give it back.</summary>
    private bool SettleReservation(int index, bool reserved)
    {
        if (!reserved)
        {
            return false;
        }

        if (Interlocked.CompareExchange(ref _state, DoneBase + index, Selecting) == Selecting)
        {
            return true;
        }

        _guards[index].Release(_sites[index]);
        return false;
    }

    private CancellationTokenSource StartReserve(int index)
    {
#pragma warning disable CA2000 // Not disposed on purpose: other threads may cancel it at any time; it owns no timer or registration.
        var source = new CancellationTokenSource();
#pragma warning restore CA2000
        Volatile.Write(ref _reserving, index);

        // A full fence (not a volatile write) before the state is read below: a claim or a
        // cancellation either sees the source and cancels it, or is seen here.
        Interlocked.Exchange(ref _pendingReserve, source);

        // A timeout is only as good as the slowest peer unless it also ends the reservation.
        long deadline = EarliestDeadline();
        if (deadline != long.MaxValue)
        {
            source.CancelAfter(MonotonicClock.WaitMilliseconds(deadline));
        }

        if (Volatile.Read(ref _state) != Selecting)
        {
            source.Cancel();
        }

        return source;
    }

    private void EndReserve()
    {
        if (Interlocked.Exchange(ref _pendingReserve, null) is { } source)
        {
            // Disarms the deadline's timer, which would otherwise keep the source alive until it fires.
            source.CancelAfter(Timeout.Infinite);
        }

        Volatile.Write(ref _reserving, -1);
    }

    /// <summary>The earliest deadline among considered deadline guards, in Stopwatch ticks; long.MaxValue if none.</summary>
    private long EarliestDeadline()
    {
        long earliest = long.MaxValue;
        foreach (int i in _deadlineGuards)
        {
            long deadline = _guards[i].DeadlineTimestamp;
            if (Considered(i) && deadline < earliest)
            {
                earliest = deadline;
            }
        }

        return earliest;
    }

    /// <summary>Leaves the selection after an exception: guards disabled, state idle. Returns a guard that committed meanwhile, or -1.</summary>
    private int Abandon()
    {
        int state = Volatile.Read(ref _state);
        if (state == Idle)
        {
            return -1;
        }

        EndReserve();
        int outcome = DisableAll();
        if (outcome >= 0)
        {
            // A partner committed the selection before it could be withdrawn: the value is not
            // lost. An input holds it for the next read; an output has delivered it.
            _last = outcome;
            try
            {
                _guards[outcome].Confirm(_sites[outcome]);
            }
#pragma warning disable CA1031 // The exception that ended the selection is the one to report.
            catch (Exception)
#pragma warning restore CA1031
            {
            }
        }

        End();
        return outcome;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(Volatile.Read(ref _state) is not Waiting, "The owner is running.");
        Debug.Assert(Array.IndexOf(_enabled, true) < 0, "No guard stays enabled after a selection.");
        Debug.Assert(Volatile.Read(ref _pendingReserve) is null && _reserving < 0, "No reservation outlives a selection.");
        Debug.Assert(Volatile.Read(ref _wakeOwnerPending) == 0, "Every owed wake was consumed.");
    }

    internal string DebuggerDisplay => $"Alternative of {_guards.Length} guards, {Volatile.Read(ref _state) switch
    {
        Idle => "idle",
        Selecting => "selecting",
        Waiting => "waiting",
        Cancelled => "cancelled",
        Failed => "failed",
        int s => $"chose guard {s - DoneBase}",
    }}, last chose {_last}";
}
