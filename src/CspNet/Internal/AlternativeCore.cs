using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Numerics;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace CspNet.Internal;

/// <summary>
/// The engine of an <see cref="Alternative"/>: a ready set, a selection state word and a way
/// to park the selecting process (thread or async).
/// </summary>
/// <remarks>
/// <para>
/// Input ends push readiness: when their channel gains an item they set the guard's bit in
/// <see cref="_ready"/> (a superset of the ready input guards: a bit is cleared only by a commit
/// attempt that found the channel empty, under that channel's lock). Selection therefore looks
/// only at set bits plus the few checked guards (skip, timers, outputs), so its cost does not
/// grow with the number of idle input guards.
/// </para>
/// <para>
/// States: <c>Idle</c> between selections; <c>Selecting</c> while the owner scans or enables;
/// <c>Waiting</c> while it is parked; <c>Cancelled</c> (async, token fired while parked);
/// <c>DoneBase + i</c> when guard <c>i</c> committed. Only offers parked by output guards let
/// other processes commit the alternative (<see cref="TryClaimByPartner"/>); they exist only
/// between enable and disable, so while the owner scans nobody else can change its state.
/// </para>
/// </remarks>
internal sealed class AlternativeCore : IValueTaskSource<bool>
{
    private const int Idle = 0;
    private const int Selecting = 1;
    private const int Waiting = 2;
    private const int Cancelled = 3;
    private const int DoneBase = 16;

    private static readonly TimerCallback s_onTimer = static state => ((AlternativeCore)state!).WakeIfWaiting();
    private static readonly Action<object?> s_onCancel = static state => ((AlternativeCore)state!).OnCancel();

    private readonly Guard[] _guards;
    private readonly ulong[] _ready;
    private readonly ulong[] _checked;
    private readonly ulong[] _all;
    private readonly int[] _timers;
    private readonly int[] _outputs;
    private readonly bool[] _enabled;
    private int _state;
    private int _last = -1;
    private bool _stale = true;

    private ManualResetEventSlim? _event;
    private ManualResetValueTaskSourceCore<bool> _asyncCore = new() { RunContinuationsAsynchronously = true };
    private Timer? _timer;

    internal AlternativeCore(Guard[] guards)
    {
        _guards = guards;
        int words = (guards.Length + 63) >> 6;
        _ready = new ulong[words];
        _checked = new ulong[words];
        _all = new ulong[words];
        _enabled = new bool[guards.Length];
        var timers = new List<int>();
        var outputs = new List<int>();
        for (int i = 0; i < guards.Length; i++)
        {
            _all[i >> 6] |= 1UL << i;
            if (guards[i].Kind == GuardKind.Checked)
            {
                _checked[i >> 6] |= 1UL << i;
            }

            if (guards[i] is CSTimer)
            {
                timers.Add(i);
            }
            else if (guards[i] is IOutputGuard)
            {
                outputs.Add(i);
            }
        }

        _timers = [.. timers];
        _outputs = [.. outputs];
    }

    internal int Count => _guards.Length;

    // ---- called by guards -------------------------------------------------------------------

    /// <summary>An input guard's channel may have an item: set its bit and wake the owner if parked.</summary>
    internal void SignalReady(int index)
    {
        Interlocked.Or(ref _ready[index >> 6], 1UL << index);
        WakeIfWaiting();
    }

    /// <summary>An input guard's channel was found empty (called under that channel's lock).</summary>
    internal void ClearReady(int index) => Interlocked.And(ref _ready[index >> 6], ~(1UL << index));

    /// <summary>Another alternative took over one of this one's input ends: re-activate before the next selection.</summary>
    internal void MarkStale() => Volatile.Write(ref _stale, true);

    /// <summary>
    /// A partner (a reader taking a parked offer) commits guard <paramref name="index"/> of this
    /// alternative. Called under the channel lock of that guard. Returns false if the
    /// alternative has already committed elsewhere or was cancelled.
    /// </summary>
    internal bool TryClaimByPartner(int index, out bool wasWaiting)
    {
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if (state != Selecting && state != Waiting)
            {
                wasWaiting = false;
                return false;
            }

            if (Interlocked.CompareExchange(ref _state, DoneBase + index, state) == state)
            {
                wasWaiting = state == Waiting;
                return true;
            }
        }
    }

    /// <summary>The owner commits guard <paramref name="index"/> while enabling (offers may be out).</summary>
    internal bool TryClaimSelf(int index) =>
        Interlocked.CompareExchange(ref _state, DoneBase + index, Selecting) == Selecting;

    /// <summary>Wakes the parked owner after a partner claimed it from the waiting state.</summary>
    internal void WakeOwner()
    {
        if (_event is { } signal)
        {
            signal.Set();
        }
        else
        {
            _asyncCore.SetResult(true);
        }
    }

    // ---- selection --------------------------------------------------------------------------

    internal int Select(int start, bool[]? preconditions)
    {
        ulong[] mask = Begin(preconditions);
        _event ??= new ManualResetEventSlim(false, SpinTuning.SyncWaiterSpinCount);
        try
        {
            return SelectLoop(start, mask);
        }
        catch (Exception) when (Abandon())
        {
            throw;
        }
    }

    private int SelectLoop(int start, ulong[] mask)
    {
        ManualResetEventSlim signal = _event!;
        while (true)
        {
            if (ScanAndEnable(start, mask, out int chosen))
            {
                return Finish(chosen);
            }

            signal.Reset();
            if (TryPark(mask, out chosen))
            {
                long alarm = EarliestAlarm(mask);
                bool woken = alarm == long.MaxValue
                    ? signal.Wait(Timeout.Infinite)
                    : signal.Wait(MonotonicClock.WaitMilliseconds(alarm));
                if (!woken && Interlocked.CompareExchange(ref _state, Selecting, Waiting) != Waiting)
                {
                    // Timed out, but a partner or a signal got there first: its wake is on the way.
                    signal.Wait();
                }

                chosen = DisableAll();
            }

            if (chosen >= 0)
            {
                return Finish(chosen);
            }
        }
    }

    // Pooled builder: a selection that waits would otherwise allocate its state machine each time.
    [System.Runtime.CompilerServices.AsyncMethodBuilder(typeof(System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder<>))]
    internal async ValueTask<int> SelectAsync(int start, bool[]? preconditions, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        ulong[] mask = Begin(preconditions);
        _event = null;
        CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(s_onCancel, this);
        try
        {
            while (true)
            {
                if (ScanAndEnable(start, mask, out int chosen))
                {
                    return Finish(chosen);
                }

                _asyncCore.Reset();
                if (TryPark(mask, out chosen))
                {
                    if (cancellationToken.IsCancellationRequested)
                    {
                        OnCancel();
                    }

                    long alarm = EarliestAlarm(mask);
                    if (alarm != long.MaxValue)
                    {
                        _timer ??= new Timer(s_onTimer, this, Timeout.Infinite, Timeout.Infinite);
                        _timer.Change(MonotonicClock.WaitMilliseconds(alarm), Timeout.Infinite);
                    }

                    await new ValueTask<bool>(this, _asyncCore.Version).ConfigureAwait(false);
                    bool cancelled = Volatile.Read(ref _state) == Cancelled;
                    if (cancelled)
                    {
                        Volatile.Write(ref _state, Selecting);
                    }

                    chosen = DisableAll();
                    if (chosen < 0 && cancelled)
                    {
                        Volatile.Write(ref _state, Idle);
                        throw new OperationCanceledException(cancellationToken);
                    }
                }

                if (chosen >= 0)
                {
                    return Finish(chosen);
                }
            }
        }
        catch (Exception e) when (e is not OperationCanceledException && Abandon())
        {
            throw;
        }
        finally
        {
            await registration.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Leaves the alternative usable after an exception inside a selection (a misused end, a
    /// throwing custom buffer): offers withdrawn, state idle. Always false, for use in a filter.
    /// </summary>
    private bool Abandon()
    {
        while (true)
        {
            int state = Volatile.Read(ref _state);
            if (state == Idle)
            {
                return false;
            }

            // Parked when the exception struck (a Thread.Interrupt, say): take the state back from
            // Waiting so that no waker completes a wait nobody is in any more.
            if (state != Waiting || Interlocked.CompareExchange(ref _state, Selecting, Waiting) == Waiting)
            {
                break;
            }
        }

        Volatile.Write(ref _state, Selecting);
        DisableAll();
        Volatile.Write(ref _state, Idle);
        return false;
    }

    private ulong[] Begin(bool[]? preconditions)
    {
        if (Interlocked.CompareExchange(ref _state, Selecting, Idle) != Idle)
        {
            throw new InvalidOperationException("This Alternative is already selecting. An Alternative belongs to one process; give each process its own.");
        }

        try
        {
            if (Volatile.Read(ref _stale))
            {
                Volatile.Write(ref _stale, false);
                for (int i = 0; i < _guards.Length; i++)
                {
                    if (_guards[i].Kind == GuardKind.Pushed)
                    {
                        _guards[i].Activate(this, i);
                    }
                }
            }

            return BuildMask(preconditions);
        }
        catch
        {
            Volatile.Write(ref _state, Idle);
            throw;
        }
    }

    private ulong[] BuildMask(bool[]? preconditions)
    {
        if (preconditions is null)
        {
            return _all;
        }

        if (preconditions.Length != _guards.Length)
        {
            throw new ArgumentException(
                $"There are {preconditions.Length} preconditions for {_guards.Length} guards; pass one precondition per guard, in the same order.",
                nameof(preconditions));
        }

        var mask = new ulong[_all.Length];
        bool any = false;
        for (int i = 0; i < preconditions.Length; i++)
        {
            if (preconditions[i])
            {
                mask[i >> 6] |= 1UL << i;
                any = true;
            }
        }

        if (!any)
        {
            throw new InvalidOperationException("Every precondition is false, so no guard could ever be chosen and the select would wait forever.");
        }

        return mask;
    }

    /// <summary>
    /// Scans the candidates from <paramref name="start"/> in cyclic order and commits the first
    /// ready one; failing that, enables the output guards (parks their offers). Returns true with
    /// the chosen index if a guard committed.
    /// </summary>
    private bool ScanAndEnable(int start, ulong[] mask, out int chosen)
    {
        chosen = Scan(start, mask);
        if (chosen >= 0)
        {
            return true;
        }

        foreach (int i in _outputs)
        {
            if ((mask[i >> 6] & (1UL << i)) == 0)
            {
                continue;
            }

            EnableResult result = _guards[i].Enable(this, i);
            _enabled[i] = result == EnableResult.Waiting;
            if (result != EnableResult.Waiting)
            {
                // Committed here, or a reader took an offer we parked a moment ago.
                chosen = DisableAll();
                Debug.Assert(chosen >= 0, "An enabling guard that did not wait leaves the alternative committed.");
                return true;
            }
        }

        return false;
    }

    private int Scan(int start, ulong[] mask)
    {
        int n = _guards.Length;
        for (int pass = 0; pass < 2; pass++)
        {
            int from = pass == 0 ? start : 0;
            int to = pass == 0 ? n : start;
            for (int word = from >> 6; word < _ready.Length && word << 6 < to; word++)
            {
                ulong candidates = (Volatile.Read(ref _ready[word]) | _checked[word]) & mask[word];
                int low = word << 6;
                if (from > low)
                {
                    candidates &= ~0UL << (from - low);
                }

                if (to < low + 64)
                {
                    candidates &= (1UL << (to - low)) - 1;
                }

                while (candidates != 0)
                {
                    int i = low + BitOperations.TrailingZeroCount(candidates);
                    candidates &= candidates - 1;
                    if (_guards[i].TryCommit(this, i))
                    {
                        return i;
                    }
                }
            }
        }

        return -1;
    }

    /// <summary>
    /// Moves to Waiting unless something changed. Returns true if the owner should park;
    /// false with <paramref name="chosen"/> set (committed through an offer) or -1 (rescan).
    /// </summary>
    private bool TryPark(ulong[] mask, out int chosen)
    {
        if (Interlocked.CompareExchange(ref _state, Waiting, Selecting) != Selecting)
        {
            // A reader took one of our offers while we were enabling.
            chosen = DisableAll();
            return false;
        }

        // A push that landed after the scan: its bit is visible now (the CAS above is a full
        // fence, and SignalReady sets the bit before it looks at the state).
        bool pushed = false;
        for (int word = 0; word < _ready.Length && !pushed; word++)
        {
            pushed = (Volatile.Read(ref _ready[word]) & mask[word] & ~_checked[word]) != 0;
        }

        if (pushed || TimerDue(mask))
        {
            if (Interlocked.CompareExchange(ref _state, Selecting, Waiting) != Waiting)
            {
                // Someone else moved us on; their wake is on the way, so consume it.
                chosen = -1;
                return true;
            }

            chosen = DisableAll();
            return false;
        }

        chosen = -1;
        return true;
    }

    private bool TimerDue(ulong[] mask)
    {
        long alarm = EarliestAlarm(mask);
        return alarm != long.MaxValue && Stopwatch.GetTimestamp() >= alarm;
    }

    /// <summary>Withdraws the offers; returns the committed guard's index, or -1.</summary>
    private int DisableAll()
    {
        foreach (int i in _outputs)
        {
            if (_enabled[i])
            {
                _enabled[i] = false;
                _guards[i].Disable(this, i);
            }
        }

        // Offers are gone: nobody can change the state any more.
        int state = Volatile.Read(ref _state);
        if (state >= DoneBase)
        {
            return state - DoneBase;
        }

        Volatile.Write(ref _state, Selecting);
        return -1;
    }

    /// <summary>The earliest timeout among enabled timers, in ticks; long.MaxValue if none.</summary>
    private long EarliestAlarm(ulong[] mask)
    {
        long earliest = long.MaxValue;
        foreach (int i in _timers)
        {
            // Ticks can be negative for an absolute timeout in the past; long.MaxValue means "no timeout".
            long alarm = _guards[i].Alarm;
            if ((mask[i >> 6] & (1UL << i)) != 0 && alarm < earliest)
            {
                earliest = alarm;
            }
        }

        return earliest;
    }

    private int Finish(int chosen)
    {
        _last = chosen;
        Volatile.Write(ref _state, Idle);
        if (_guards[chosen] is IOutputGuard output)
        {
            output.ThrowIfFailed();
        }

        return chosen;
    }

    internal int LastSelected => _last;

    private void WakeIfWaiting()
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
    }

    bool IValueTaskSource<bool>.GetResult(short token) => _asyncCore.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<bool>.GetStatus(short token) => _asyncCore.GetStatus(token);

    void IValueTaskSource<bool>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _asyncCore.OnCompleted(continuation, state, token, flags);
}
