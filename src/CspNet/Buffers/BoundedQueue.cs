using System;
using System.Runtime.CompilerServices;

namespace CspNet;

/// <summary>
/// The storage of the fixed-capacity buffers: a first-in first-out ring of at most
/// <see cref="Capacity"/> values whose array grows with use, so a large capacity costs nothing
/// until values are stored, and is given back when the queue empties.
/// </summary>
/// <typeparam name="T">The type of the values stored.</typeparam>
/// <remarks>
/// A mutable struct, kept in a (non-readonly) field of its buffer to save an object and an
/// indirection per operation; never copy it.
/// </remarks>
internal struct BoundedQueue<T>
{
    /// <summary>The first array allocated, unless the capacity is smaller.</summary>
    internal const int InitialLength = 4;

    /// <summary>
    /// The largest array kept when the queue empties; a larger one is dropped. Growing back costs
    /// at most a few copies per value stored since, so this never costs more than a constant per item.
    /// </summary>
    internal const int RetainedLength = 1024;

    private T[] _items;
    private int _head;
    private int _count;

    /// <summary>Creates an empty queue that holds at most <paramref name="capacity"/> values; allocates nothing.</summary>
    /// <param name="capacity">The capacity, at least 1.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is below 1.</exception>
    internal BoundedQueue(int capacity)
    {
        if (capacity < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(capacity), capacity,
                "A buffer's capacity must be at least 1. For a rendezvous channel, create the channel without a buffer.");
        }

        Capacity = capacity;
        _items = [];
    }

    /// <summary>The most values the queue holds.</summary>
    internal int Capacity { get; }

    /// <summary>The number of values stored.</summary>
    internal readonly int Count => _count;

    /// <summary>Whether the queue holds <see cref="Capacity"/> values.</summary>
    internal readonly bool IsFull => _count >= Capacity;

    /// <summary>The length of the array behind the queue (for tests).</summary>
    internal readonly int AllocatedLength => _items.Length;

    /// <summary>Adds a value at the end. Called only when <see cref="IsFull"/> is false.</summary>
    internal void Enqueue(T item)
    {
        if (_count == _items.Length)
        {
            Grow();
        }

        int tail = _head + _count;
        if (tail >= _items.Length)
        {
            tail -= _items.Length;
        }

        _items[tail] = item;
        _count++;
    }

    /// <summary>Removes and returns the oldest value. Called only when <see cref="Count"/> is positive.</summary>
    /// <exception cref="InvalidOperationException">The queue is empty.</exception>
    internal T Dequeue()
    {
        if (_count == 0)
        {
            throw new InvalidOperationException("The buffer is empty; a channel calls Take only when Count is positive.");
        }

        T item = _items[_head];
        if (RuntimeHelpers.IsReferenceOrContainsReferences<T>())
        {
            _items[_head] = default!;   // do not keep the value alive from here
        }

        _count--;
        if (_count == 0)
        {
            _head = 0;
            if (_items.Length > RetainedLength)
            {
                _items = [];
            }
        }
        else if (++_head == _items.Length)
        {
            _head = 0;
        }

        return item;
    }

    private void Grow()
    {
        int length = _items.Length == 0
            ? InitialLength
            : (int)Math.Min(2L * _items.Length, Array.MaxLength);
        length = Math.Min(length, Capacity);
        if (length <= _items.Length)
        {
            throw new InvalidOperationException($"A buffer cannot store more than {Array.MaxLength:N0} values.");
        }

        var items = new T[length];
        int firstPart = Math.Min(_count, _items.Length - _head);
        Array.Copy(_items, _head, items, 0, firstPart);
        Array.Copy(_items, 0, items, firstPart, _count - firstPart);
        _items = items;
        _head = 0;
    }
}
