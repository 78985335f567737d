using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;
using CspNet.Internal.Scheduling;

namespace CspNet;

// Reservations: buffer slots set aside for values that are still on their way, so that a writer
// in another program can stream values without a round trip each (the write credits of
// docs/DISTRIBUTED.md). Used only by the distributed layer.
//
// A reserved slot counts as full: local writers see the buffer full when
// Count + reserved &gt;= capacity, so the buffer never holds more than its declared
// capacity, whoever writes. PutReserved turns a reservation into a buffered value
// (it never blocks: the slot is there); ReleaseReservations gives unused ones back,
// which moves writers parked meanwhile into the room.
//
// Only buffers that know their capacity (IReservableBuffer) take reservations; a
// buffer that never makes writers wait grants any number, and never fills up with them. All of it
// runs under the channel's one lock, and partners are woken after it, as everywhere in the core.
public abstract partial class CspChannel<T>
{
    /// <summary>
    /// How many values the buffer holds before writers wait, as reservations see it: 0 if nothing
    /// can be reserved (no buffer, or one of unknown capacity), <see cref="int.MaxValue"/> for a
    /// buffer that never fills.
    /// </summary>
    internal int ReservableCapacity
    {
        get
        {
            ControlPoint.BeforeLock(this);
            lock (this)
            {
                return ReservableCapacityLocked();
            }
        }
    }

    /// <summary>Whether the buffer's capacity is known, so that <see cref="TryReserve"/> can grant anything.</summary>
    internal bool CanReserve => ReservableCapacity > 0;

    /// <summary>The slots reserved and not yet filled or released (for tests and diagnostics).</summary>
    internal int ReservedCount
    {
        get
        {
            ControlPoint.BeforeLock(this);
            lock (this)
            {
                return _reserved;
            }
        }
    }

    /// <summary>
    /// Reserves up to <paramref name="max"/> free slots of the buffer and returns how many it did:
    /// 0 if none is free, the channel is poisoned (nothing more will be put), or the buffer's
    /// capacity is unknown.
    /// </summary>
    internal int TryReserve(int max)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(max);
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (_poisoned || _buffer is not { } buffer)
            {
                return 0;
            }

            long free = (long)ReservableCapacityLocked() - buffer.Count - _reserved;
            int granted = (int)Math.Clamp(free, 0, max);
            _reserved += granted;
            AssertInvariants();
            return granted;
        }
    }

    /// <summary>
    /// Puts a value into a slot reserved for it: hands it to a parked reader, or stores it in the
    /// buffer. Never blocks. A poisoned channel still stores it: the write it stands for completed
    /// when its slot was reserved, and buffered values stay readable after poison.
    /// </summary>
    internal void PutReserved(T item)
    {
        Waiter<T>? reader;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (_reserved == 0)
            {
                throw new InvalidOperationException($"{Kind} has no reserved slot for this value.");
            }

            _reserved--;

            // A parked reader is next in line only while nothing is buffered (see MayHandToReaderLocked).
            reader = MayHandToReaderLocked() ? _readers.DequeueClaimed() : null;
            if (reader is not null)
            {
                reader.Item = item;
            }
            else
            {
                // The slot is free by construction, so the put is not checked against IsFull
                // (a FrontSlotBuffer may look full for items given back in front of it; its Put
                // keeps them in order all the same).
                _buffer!.Put(item);
                _hasBuffered = _buffer.Count > 0;
            }

            AssertInvariants();
        }

        reader?.Wake();
    }

    /// <summary>
    /// Gives back <paramref name="count"/> reserved slots that will not be filled (the writer they
    /// were for left or was lost). Writers parked for room move in, as a take would move them.
    /// </summary>
    internal void ReleaseReservations(int count)
    {
        if (count == 0)
        {
            return;
        }

        Waiter<T>? woken = null;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (count < 0 || count > _reserved)
            {
                throw new ArgumentOutOfRangeException(nameof(count), count, $"{Kind} has {_reserved} reserved slots.");
            }

            _reserved -= count;
            IBuffer<T> buffer = _buffer!;
            while (!IsFullLocked(buffer) && _writers.DequeueClaimed() is { } writer)
            {
                // Watchers among them fire and are dropped on the way (another reservation may
                // take the room); a claimed writer's value moves in and its write completes.
                RefillLocked(buffer, writer);
                writer.Next = woken;
                woken = writer;
            }

            AssertInvariants();
        }

        WakeAll(woken);
    }

    /// <summary>
    /// Completes when a reservation could succeed now (a slot is free) or the channel is poisoned;
    /// at once if so already. Reserves nothing: another reservation or writer may take the room
    /// first, so the caller tries again (once per such event: no polling). Cancelling it is exact.
    /// </summary>
    internal async ValueTask WhenReservableAsync(CancellationToken cancellationToken)
    {
        ReadinessWatcher<T> watcher;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            if (_poisoned || _buffer is not { } buffer || HasReservableRoomLocked(buffer))
            {
                return;
            }

            // Among the writers: a take that frees room dequeues writers, which fires it.
            watcher = new ReadinessWatcher<T>();
            _writers.Enqueue(watcher, isReader: false);
        }

        await AwaitWatcherAsync(watcher, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Completes when the channel is poisoned (at once if it is).</summary>
    internal Task WhenPoisoned()
    {
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            // Created on demand beside the channel, as PoisonReasons is: few channels are watched.
            return _poisoned
                ? Task.CompletedTask
                : PoisonWatches.GetValue(this, static _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
        }
    }

    private static readonly ConditionalWeakTable<object, TaskCompletionSource> PoisonWatches = new();

    private void SignalPoisonWatch()
    {
        if (PoisonWatches.TryGetValue(this, out TaskCompletionSource? watch))
        {
            watch.TrySetResult();
        }
    }

    /// <summary>
    /// Whether writers must wait: the buffer says so, or its free slots are all reserved. The second
    /// test costs one comparison while nothing is reserved, which is every channel but those a
    /// remote writer streams to.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool IsFullLocked(IBuffer<T> buffer)
    {
        AssertLockHeld();
        return buffer.IsFull || (_reserved != 0 && (long)buffer.Count + _reserved >= ReservableCapacityLocked());
    }

    /// <summary>
    /// Whether <see cref="TryReserve"/> would grant a slot now. Stricter than "not full": values a
    /// released hold gave back sit in front slots that plain writers do not count, but reservations
    /// do, so a buffer can have room for a writer and none to reserve. A buffer of unknown capacity
    /// reserves nothing; for it this is "not full", as before.
    /// </summary>
    private bool HasReservableRoomLocked(IBuffer<T> buffer)
    {
        AssertLockHeld();
        int capacity = ReservableCapacityLocked();
        return capacity == 0
            ? !IsFullLocked(buffer)
            : !IsFullLocked(buffer) && (long)capacity - buffer.Count - _reserved > 0;
    }

    private int ReservableCapacityLocked()
    {
        AssertLockHeld();
        return _buffer is IReservableBuffer reservable ? reservable.ReservableCapacity : 0;
    }

    [Conditional("DEBUG")]
    private void AssertReservations()
    {
        Debug.Assert(_reserved >= 0, "Reservations are never negative.");
        Debug.Assert(_reserved == 0 || ReservableCapacityLocked() > 0, "Only a buffer of known capacity has reservations.");

        // A FrontSlotBuffer holds items given back in front of the buffer as extra room; without
        // one, the buffer and its reservations never exceed the capacity.
        Debug.Assert(
            _reserved == 0 || _buffer is FrontSlotBuffer<T> || (long)_buffer!.Count + _reserved <= ReservableCapacityLocked(),
            "Buffered values and reserved slots never exceed the capacity.");
    }
}
