using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Internal;

/// <summary>
/// Holds: a value set aside for a reader that is not in this program (a remote selecting reader,
/// see docs/DISTRIBUTED.md) until its selection decides. Used only by the distributed layer.
/// </summary>
/// <remarks>
/// <para>
/// A hold takes the value a read would take, from the buffer or from a parked plain writer, but
/// the writer is claimed without being woken: its write is not complete until the hold is
/// <see cref="Commit"/>ted. <see cref="Release"/> undoes the hold: the writer is parked again,
/// first in line, or the buffered item goes back in front of the buffer; readers parked
/// meanwhile are served as a write would serve them.
/// </para>
/// <para>
/// Offers parked by another alternation's output guard are not held: claiming one commits that
/// alternation irrevocably, so a hold could not give it back. A hold therefore sees plain writers
/// and the buffer only; a selecting writer is still read by plain reads (local or remote).
/// </para>
/// <para>
/// Nothing here adds a field to the channel: a hold is an object of its own, a watch is a waiter
/// in the readers' queue (<see cref="ReadinessWatcher{T}"/>), and the front slot a released
/// buffered item needs wraps the buffer only once a hold has been released on it.
/// </para>
/// </remarks>
internal sealed partial class ChannelCore<T>
{
    /// <summary>
    /// Whether a hold could take something now: a buffered item, a plain parked writer, or the
    /// poison. Offers of other alternations do not count (see the remarks of this class).
    /// </summary>
    private bool HoldableLocked() => _poisoned || (_buffer is { } buffer && buffer.Count > 0) || _writers.HasPlain();

    /// <summary>
    /// Sets one value aside at once if there is one; null if there is none. Throws
    /// <see cref="PoisonException"/> once the channel is poisoned and drained.
    /// </summary>
    internal ChannelHold<T>? TryHold()
    {
        Waiter<T>? refilled = null;
        ChannelHold<T>? hold;
        lock (_lock)
        {
            AssertInvariants();
            if (_buffer is { } buffer && buffer.Count > 0)
            {
                // The sequence number orders released items among themselves: holds on one
                // channel take in order, so numbers from one counter rise in take order.
                long sequence;
                T item = buffer is FrontSlotBuffer<T> front ? front.Take(out sequence) : TakeNumbered(buffer, out sequence);
                _buffered = buffer.Count;

                // As a read: the freed slot is refilled at once, which completes that writer's
                // write (its value is in the buffer now, whatever becomes of the hold).
                refilled = _writers.DequeueClaimed();
                if (refilled is not null)
                {
                    RefillLocked(buffer, refilled);
                }

                hold = new ChannelHold<T>(this, item, writer: null, sequence);
            }
            else if (_writers.DequeuePlain() is { } writer)
            {
                // Claimed (its cancellation cannot win now) but not woken: the write is not done.
                hold = new ChannelHold<T>(this, writer.Item!, writer, sequence: 0);
            }
            else if (_poisoned)
            {
                throw CreatePoisoned();
            }
            else
            {
                hold = null;
            }

            AssertInvariants();
        }

        refilled?.Wake();
        return hold;
    }

    private static T TakeNumbered(IBuffer<T> buffer, out long sequence)
    {
        sequence = FrontSlotBuffer<T>.NextSequence();
        return buffer.Take();
    }

    /// <summary>
    /// Sets one value aside, waiting (without a thread) until there is one. Cancelling it is exact:
    /// a cancelled hold holds nothing.
    /// </summary>
    internal async ValueTask<ChannelHold<T>> HoldAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (TryHold() is { } hold)
            {
                return hold;
            }

            // A watch fires on every event that may make a hold possible; another reader may have
            // taken the value first, so the loop tries again (once per such event: no polling).
            await WhenHoldableAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Completes when a hold could take something (a buffered item, a plain parked writer, the
    /// poison), at once if it could now. Takes nothing. For shared reading ends only: the watch
    /// parks a waiter among the readers, which a single-reader channel would take for a second reader.
    /// </summary>
    internal async ValueTask WhenHoldableAsync(CancellationToken cancellationToken)
    {
        Debug.Assert(!_singleReader, "Watches are for channels with a shared reading end.");
        ReadinessWatcher<T> watcher;
        lock (_lock)
        {
            if (HoldableLocked())
            {
                return;
            }

            watcher = new ReadinessWatcher<T>();
            _readers.Enqueue(watcher, isReader: true);
        }

        await AwaitWatcherAsync(watcher, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Waits for a queued watcher to fire (or the wait to be cancelled), then takes it out of its queue.</summary>
    private async ValueTask AwaitWatcherAsync(ReadinessWatcher<T> watcher, CancellationToken cancellationToken)
    {
        try
        {
            using (cancellationToken.UnsafeRegister(static s => ((ReadinessWatcher<T>)s!).Cancel(), watcher))
            {
                await watcher.Fired.ConfigureAwait(false);
            }
        }
        finally
        {
            // A watcher fired by SignalSelections (a value put in the buffer, or room made, by an
            // enabling alternation) or cancelled is still queued: take it out.
            lock (_lock)
            {
                if (watcher.IsReader)
                {
                    _readers.Remove(watcher);
                }
                else
                {
                    _writers.Remove(watcher);
                }
            }
        }
    }

    /// <summary>
    /// The hold's reader took the value: a held writer's write completes now. A value held from a
    /// channel poisoned since was taken before the poison, so the commit stands.
    /// </summary>
    internal static void Commit(ChannelHold<T> hold)
    {
        if (hold.Settle() is { } writer)
        {
            writer.Item = default;
            writer.Wake();
        }
    }

    /// <summary>
    /// Gives a held value back exactly where it was: a held writer parks again first in line (or
    /// pairs with a reader that parked meanwhile); a buffered item goes back in front of the
    /// buffer. On a channel poisoned meanwhile, a held writer fails with the poison (its write did
    /// not happen) and a buffered item stays readable, as buffered items do after poison. A
    /// writer whose cancellation was asked for while it was held is cancelled now.
    /// </summary>
    internal void Release(ChannelHold<T> hold)
    {
        Waiter<T>? writer = hold.Settle();
        if (hold.IsSettledTwice)
        {
            return;
        }

        Waiter<T>? reader = null;
        Waiter<T>? wake = null;
        lock (_lock)
        {
            AssertInvariants();
            if (writer is not null)
            {
                if (_poisoned || writer.CancellationRequested)
                {
                    writer.Item = default;
                    writer.Error = _poisoned ? CreatePoisoned() : writer.CreateCancellation();
                    wake = writer;
                }
                else if (TryPutLocked(writer.Item!, self: null, plainOnly: false, out reader))
                {
                    // A reader parked while the writer was held: it takes the value as it would
                    // have from the writer, and the write completes.
                    writer.Item = default;
                    wake = writer;
                }
                else
                {
                    writer.Unclaim();
                    _writers.EnqueueFront(writer, isReader: false);
                }
            }
            else
            {
                // Readers park only on an empty buffer, so one that parked meanwhile takes the
                // value as the next in line; otherwise the value goes back in front.
                reader = _poisoned ? null : _readers.DequeueClaimed();
                if (reader is not null)
                {
                    reader.Item = hold.Item;
                }
                else
                {
                    var front = _buffer as FrontSlotBuffer<T> ?? new FrontSlotBuffer<T>(_buffer!);
                    _buffer = front;
                    front.PutBack(hold.Item, hold.Sequence);
                    _buffered = front.Count;
                }
            }

            AssertInvariants();
        }

        reader?.Wake();
        wake?.Wake();
    }
}

/// <summary>
/// A value set aside by <see cref="ChannelCore{T}.TryHold"/>: settled exactly once, by
/// <see cref="ChannelCore{T}.Commit"/> or <see cref="ChannelCore{T}.Release"/>.
/// </summary>
internal sealed class ChannelHold<T>
{
    private readonly Waiter<T>? _writer;
    private int _settled;

    internal ChannelHold(ChannelCore<T> channel, T item, Waiter<T>? writer, long sequence)
    {
        Channel = channel;
        Item = item;
        _writer = writer;
        Sequence = sequence;
    }

    /// <summary>For a buffered value: its place among the values held from the same buffer.</summary>
    internal long Sequence { get; }

    internal ChannelCore<T> Channel { get; }

    /// <summary>The value held.</summary>
    internal T Item { get; }

    /// <summary>Whether the value is a parked writer's (false: it came out of the buffer).</summary>
    internal bool FromWriter => _writer is not null;

    /// <summary>Whether the last <see cref="Settle"/> found the hold settled already.</summary>
    internal bool IsSettledTwice { get; private set; }

    /// <summary>Marks the hold settled; returns the held writer the first time, null after (and for a buffered value).</summary>
    internal Waiter<T>? Settle()
    {
        if (Interlocked.Exchange(ref _settled, 1) != 0)
        {
            IsSettledTwice = true;
            return null;
        }

        return _writer;
    }
}

/// <summary>
/// A one-shot watch parked in a channel's readers' queue (a writer that tries to pair with it, an
/// alternation that puts a value in the buffer, or the poison fires it) or in its writers' queue
/// (a take that frees room, a release of reservations, or the poison fires it). Nobody can claim
/// it, so it never takes or gives a value.
/// </summary>
internal sealed class ReadinessWatcher<T> : Waiter<T>
{
    private readonly TaskCompletionSource _fired = new(TaskCreationOptions.RunContinuationsAsynchronously);

    internal Task Fired => _fired.Task;

    // Never null, and never any alternation's: plain-only paths (DequeuePlain, HasPlain) pass it by.
    internal override object? Selection => this;

    internal override bool IsWatcher => true;

    internal override bool TryClaim()
    {
        _fired.TrySetResult();
        return false;
    }

    internal override void SignalSelection() => _fired.TrySetResult();

    internal void Cancel() => _fired.TrySetCanceled();

    internal override void Wake() => Debug.Fail("A watcher is never claimed, so never woken.");
}

/// <summary>
/// A channel's buffer with a few slots in front of it, for items released holds give back: they
/// are taken first again, in the order they had, so the buffer's order holds. Installed by the
/// first such release and kept (a channel that had one is likely to have more). Holds are few at
/// once (one per remote selecting reader), so the front is a short sorted list.
/// </summary>
/// <remarks>
/// Taking a front item frees no room in the buffer itself, yet the channel refills after every
/// take from a parked writer (that is what keeps plain reads free of extra checks). Such a value
/// waits in an overflow behind the buffer and moves in as the buffer frees room; the overflow never
/// holds more values than front items were taken, and <see cref="IsFull"/> stays true meanwhile.
/// </remarks>
internal sealed class FrontSlotBuffer<T>(IBuffer<T> inner) : IBuffer<T>, IReservableBuffer
{
    private readonly System.Collections.Generic.List<(long Sequence, T Item)> _front = [];
    private readonly System.Collections.Generic.Queue<T> _overflow = new();
    private static long s_sequence;

    internal static long NextSequence() => Interlocked.Increment(ref s_sequence);

    public int Count => inner.Count + _front.Count + _overflow.Count;

    // The front slots and the overflow are extra room: writers see only the buffer's own capacity.
    public bool IsFull => inner.IsFull;

    // Reservations made before this wrapper came keep their meaning; a buffer of unknown capacity stays one.
    int IReservableBuffer.ReservableCapacity => inner is IReservableBuffer reservable ? reservable.ReservableCapacity : 0;

    public void Put(T item)
    {
        if (_overflow.Count > 0 || inner.IsFull)
        {
            _overflow.Enqueue(item);
        }
        else
        {
            inner.Put(item);
        }
    }

    public T Take() => Take(out _);

    /// <summary>Takes the first item, and its sequence number (a new one for an item of the buffer itself).</summary>
    internal T Take(out long sequence)
    {
        if (_front.Count > 0)
        {
            (sequence, T first) = _front[0];
            _front.RemoveAt(0);
            return first;
        }

        sequence = NextSequence();
        T item = inner.Take();
        if (_overflow.Count > 0)
        {
            inner.Put(_overflow.Dequeue());
        }

        return item;
    }

    /// <summary>Puts a released item back before every item taken after it.</summary>
    internal void PutBack(T item, long sequence)
    {
        int i = 0;
        while (i < _front.Count && _front[i].Sequence < sequence)
        {
            i++;
        }

        _front.Insert(i, (sequence, item));
    }
}
