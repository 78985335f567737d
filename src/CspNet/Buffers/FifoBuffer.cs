using System;
using System.Collections.Generic;

namespace CspNet;

/// <summary>A first-in first-out buffer of fixed capacity: writers wait while it is full.</summary>
/// <typeparam name="T">The type of the values stored.</typeparam>
/// <remarks><inheritdoc cref="IBuffer{T}" path="/remarks"/></remarks>
public sealed class FifoBuffer<T> : IBuffer<T>
{
    private readonly Queue<T> _items;

    /// <summary>Creates a buffer that holds at most <paramref name="capacity"/> values.</summary>
    /// <param name="capacity">The capacity, at least 1. For a rendezvous, use an unbuffered channel instead.</param>
    public FifoBuffer(int capacity)
    {
        BufferGuard.RequirePositiveCapacity(capacity);
        Capacity = capacity;
        _items = new Queue<T>(capacity);
    }

    /// <summary>The most values the buffer holds.</summary>
    public int Capacity { get; }

    /// <inheritdoc />
    public int Count => _items.Count;

    /// <inheritdoc />
    public bool IsFull => _items.Count >= Capacity;

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
