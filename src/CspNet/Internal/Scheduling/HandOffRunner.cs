using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace CspNet.Internal.Scheduling;

/// <summary>
/// One thread's next-run slots and the loop that drains them (see <see cref="HandOff"/>). Only
/// its thread pushes and takes; the <see cref="Watchdog"/> may empty a slot from another thread,
/// so every slot is taken with one exchange and a continuation runs exactly once.
/// </summary>
internal sealed class HandOffRunner
{
    /// <summary>Continuations a thread keeps for itself; a further one sends the oldest to the pool.</summary>
    internal const int SlotCount = 4;

    /// <summary>Continuations run by one thread-pool work item before the rest go back to the pool.</summary>
    internal const int ChainBudget = 64;

    private const int SlotMask = SlotCount - 1;

    private static long s_heldPastCompletion;

    private Slots _slots;

    // Owner-only ring positions: _head is the oldest pushed slot not yet taken, _tail the next free.
    // A slot the watchdog emptied is skipped when its turn comes.
    private int _head;
    private int _tail;

    // Ring position up to which the slotted continuations were already waiting when the running
    // continuation last completed an operation without parking (see CompletedWithoutParking).
    private int _waitingSinceLastCompletion;

    // Continuations this runner has started: the watchdog's measure of progress.
    private int _started;
    private int _startedAtLastTick;

    private HandOffRunner(Thread thread)
    {
        Thread = thread;
    }

    internal Thread Thread { get; }

    /// <summary>
    /// Times a slotted continuation was found still waiting when the continuation that woke it
    /// completed a further operation without parking (each one is then moved to the pool, so each
    /// is counted once): tests bound a poller's held wake-ups with it.
    /// </summary>
    internal static long HeldPastCompletion => Interlocked.Read(ref s_heldPastCompletion);

    /// <summary>Whether a chain is running on this thread now; only its thread reads it.</summary>
    internal bool IsRunning { get; private set; }

    internal static HandOffRunner ForCurrentThread()
    {
        var runner = new HandOffRunner(Thread.CurrentThread);
        Watchdog.Register(runner);
        return runner;
    }

    /// <summary>Keeps <paramref name="item"/> to run after the current continuation; owner thread, while running.</summary>
    internal void Push(IHandOff item)
    {
        Debug.Assert(IsRunning && Thread == Thread.CurrentThread, "Only a running runner's own thread pushes.");
        if (_tail - _head == SlotCount)
        {
            // Full: the oldest goes to the pool, where another thread can take it now.
            IHandOff? oldest = Interlocked.Exchange(ref _slots[_head & SlotMask], null);
            _head++;
            if (oldest is not null)
            {
                HandOff.QueueToPool(oldest);
            }
        }

        // A plain write into a free slot: the watchdog only ever empties slots.
        Volatile.Write(ref _slots[_tail & SlotMask], item);
        _tail++;
        AssertInvariants();
    }

    /// <summary>Runs <paramref name="first"/>, then the slotted continuations in order, until none is left or the budget is spent.</summary>
    internal void Run(IHandOff first)
    {
        IsRunning = true;
        _waitingSinceLastCompletion = _head;
        Watchdog.ChainStarted();
        try
        {
            IHandOff? item = first;
            int left = ChainBudget;
            do
            {
                Volatile.Write(ref _started, _started + 1);
                item.InvokeContinuation();
                if (--left == 0)
                {
                    break;
                }

                item = TakeNext();
                _waitingSinceLastCompletion = _head;
            }
            while (item is not null);
        }
        finally
        {
            // The budget is spent (or a continuation threw, which ends the process as on the pool):
            // what is left goes to the pool, oldest first, behind the work already queued there.
            IsRunning = false;
            while (TakeNext() is { } left)
            {
                HandOff.QueueToPool(left);
            }

            AssertInvariants();
            Watchdog.ChainEnded();
        }
    }

    /// <summary>
    /// The running continuation completed an operation without parking: it is not about to
    /// return. What it woke before its previous such completion goes to the pool now, where another
    /// thread can run it, so a process that never parks (one that polls) holds nobody's wake-up
    /// for more than one operation. What it woke since stays: the common pipeline step (take an
    /// input at once, hand an output to a parked reader, then park on the next input) still runs
    /// its partner next on this thread.
    /// </summary>
    internal void CompletedWithoutParking()
    {
        Debug.Assert(IsRunning && Thread == Thread.CurrentThread, "Only a running runner's own thread completes operations in it.");
        while (_waitingSinceLastCompletion - _head > 0)
        {
            IHandOff? item = Interlocked.Exchange(ref _slots[_head & SlotMask], null);
            _head++;
            if (item is not null)
            {
                Interlocked.Increment(ref s_heldPastCompletion);
                HandOff.QueueToPool(item);
            }
        }

        _waitingSinceLastCompletion = _tail;
        AssertInvariants();
    }

    /// <summary>
    /// Watchdog side, once per tick: if this runner has started nothing since the last tick, its
    /// slotted continuations go to the pool (their thread is busy with something that does not park).
    /// </summary>
    internal void RescueIfStuck()
    {
        int started = Volatile.Read(ref _started);
        if (started != _startedAtLastTick)
        {
            _startedAtLastTick = started;
            return;
        }

        int head = Volatile.Read(ref _head);
        for (int k = 0; k < SlotCount; k++)
        {
            ref IHandOff? slot = ref _slots[(head + k) & SlotMask];
            if (Volatile.Read(ref slot) is not null && Interlocked.Exchange(ref slot, null) is { } item)
            {
                HandOff.QueueToPool(item);
            }
        }
    }

    private IHandOff? TakeNext()
    {
        while (_head != _tail)
        {
            IHandOff? item = Interlocked.Exchange(ref _slots[_head & SlotMask], null);
            _head++;
            if (item is not null)
            {
                return item;
            }
        }

        return null;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_tail - _head is >= 0 and <= SlotCount, "At most SlotCount continuations wait in a runner.");
        Debug.Assert(!IsRunning || _waitingSinceLastCompletion - _head <= _tail - _head, "The waiting mark lies within the ring.");
    }

    [InlineArray(SlotCount)]
    private struct Slots
    {
        private IHandOff? _element;
    }
}
