using System.Collections.Generic;

namespace CspNet;

/// <summary>
/// A first-in first-out buffer without a capacity limit: writers never wait. Memory is the only
/// limit, so use it only where readers are known to keep up on average.
/// </summary>
/// <typeparam name="T">The type of the values stored.</typeparam>
/// <remarks><inheritdoc cref="IBuffer{T}" path="/remarks"/></remarks>
public sealed class InfiniteBuffer<T> : IBuffer<T>, IReservableBuffer
{
    private readonly Queue<T> _items = new();

    // Never full: reserved room never makes writers wait.
    int IReservableBuffer.ReservableCapacity => int.MaxValue;

    /// <inheritdoc />
    public int Count => _items.Count;

    /// <inheritdoc />
    public bool IsFull => false;

    /// <inheritdoc />
    public void Put(T item) => _items.Enqueue(item);

    /// <inheritdoc />
    public T Take() => _items.Dequeue();
}
