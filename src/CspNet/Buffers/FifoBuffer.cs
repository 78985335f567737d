using System;

namespace CspNet;

/// <summary>A first-in first-out buffer of fixed capacity: writers wait while it is full.</summary>
/// <typeparam name="T">The type of the values stored.</typeparam>
/// <remarks><inheritdoc cref="IBuffer{T}" path="/remarks"/></remarks>
public sealed class FifoBuffer<T> : IBuffer<T>, IReservableBuffer
{
    private BoundedQueue<T> _items;   // a mutable struct: not readonly

    /// <summary>Creates a buffer that holds at most <paramref name="capacity"/> values.</summary>
    /// <param name="capacity">
    /// The capacity, at least 1. For a rendezvous, use an unbuffered channel instead. It is a bound,
    /// not an allocation: storage grows as values are stored and is released when the buffer empties.
    /// </param>
    public FifoBuffer(int capacity) => _items = new BoundedQueue<T>(capacity);

    /// <summary>The most values the buffer holds.</summary>
    public int Capacity => _items.Capacity;

    int IReservableBuffer.ReservableCapacity => _items.Capacity;

    /// <inheritdoc />
    public int Count => _items.Count;

    /// <inheritdoc />
    public bool IsFull => _items.IsFull;

    /// <inheritdoc />
    public void Put(T item)
    {
        if (IsFull)
        {
            throw new InvalidOperationException("The FIFO buffer is full; a channel calls Put only when IsFull is false.");
        }

        _items.Enqueue(item);
    }

    /// <inheritdoc />
    public T Take() => _items.Dequeue();
}
