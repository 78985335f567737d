using System.Collections.Generic;
using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// A channel's buffer with a few slots in front of it, for items released holds give back: they
/// are taken first again, in the order they had, so the buffer's order holds. Installed by the
/// first hold of a buffered item and kept (a channel that had one is likely to have more). It also
/// counts the items held out of it (<see cref="HeldOut"/>): while one is, the channel hands out
/// nothing behind it (see CspChannel.Holds.cs), so the front holds at most a few items.
/// </summary>
/// <remarks>
/// Taking a front item frees no room in the buffer itself, yet the channel refills after every
/// take from a parked writer (that is what keeps plain reads free of extra checks). Such a value
/// waits in an overflow behind the buffer and moves in as the buffer frees room; the overflow never
/// holds more values than front items were taken, and <see cref="IsFull"/> stays true meanwhile.
/// </remarks>
internal sealed class FrontSlotBuffer<T>(IBuffer<T> inner) : IBuffer<T>, IReservableBuffer
{
    private readonly List<(long Sequence, T Item)> _front = [];
    private readonly Queue<T> _overflow = new();
    private static long s_sequence;

    internal static long NextSequence() => Interlocked.Increment(ref s_sequence);

    /// <summary>Items taken by holds and not yet committed or released (under the channel's lock).</summary>
    internal int HeldOut { get; set; }

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
