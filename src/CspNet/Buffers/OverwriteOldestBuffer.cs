namespace CspNet;

/// <summary>
/// A buffer of fixed capacity that never makes writers wait: when it is full, a new value
/// replaces the oldest one. Readers always see the newest values, which suits sensor readings
/// and status updates, where a stale value is worth less than a fresh one.
/// </summary>
/// <typeparam name="T">The type of the values stored.</typeparam>
/// <remarks>
/// This is the one buffer that drops values by design: the write of a value that is later
/// overwritten still succeeds. <see cref="OverwrittenCount"/> tells how many were dropped.
/// <inheritdoc cref="IBuffer{T}" path="/remarks"/>
/// </remarks>
public sealed class OverwriteOldestBuffer<T> : IBuffer<T>, IReservableBuffer
{
    private BoundedQueue<T> _items;   // a mutable struct: not readonly

    /// <summary>Creates a buffer that keeps the newest <paramref name="capacity"/> values.</summary>
    /// <param name="capacity">
    /// The capacity, at least 1. It is a bound, not an allocation: storage grows as values are
    /// stored and is released when the buffer empties.
    /// </param>
    public OverwriteOldestBuffer(int capacity) => _items = new BoundedQueue<T>(capacity);

    /// <summary>The most values the buffer holds.</summary>
    public int Capacity => _items.Capacity;

    /// <summary>How many values have been overwritten before a reader took them.</summary>
    public long OverwrittenCount { get; private set; }

    // Never full (a new value replaces the oldest): reserved room never makes writers wait.
    int IReservableBuffer.ReservableCapacity => int.MaxValue;

    /// <inheritdoc />
    public int Count => _items.Count;

    /// <inheritdoc />
    public bool IsFull => false;

    /// <inheritdoc />
    public void Put(T item)
    {
        if (_items.IsFull)
        {
            _items.Dequeue();
            OverwrittenCount++;
        }

        _items.Enqueue(item);
    }

    /// <inheritdoc />
    public T Take() => _items.Dequeue();
}
