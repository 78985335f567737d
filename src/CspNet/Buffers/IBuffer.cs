namespace CspNet;

/// <summary>
/// Storage a channel uses between writers and readers. Implement it to give a channel a custom
/// buffering policy.
/// </summary>
/// <typeparam name="T">The type of the values stored.</typeparam>
/// <remarks>
/// A buffer belongs to exactly one channel. The channel calls it only while holding its own lock,
/// so an implementation needs no synchronisation of its own, but it must be quick and must not
/// block or call back into the channel.
/// </remarks>
public interface IBuffer<T>
{
    /// <summary>The number of values stored.</summary>
    int Count { get; }

    /// <summary>Whether <see cref="Put"/> must not be called now; writers wait while it is true.</summary>
    bool IsFull { get; }

    /// <summary>Stores a value. Called only when <see cref="IsFull"/> is false.</summary>
    /// <param name="item">The value to store.</param>
    void Put(T item);

    /// <summary>Removes and returns the oldest value. Called only when <see cref="Count"/> is positive.</summary>
    /// <returns>The value removed.</returns>
    T Take();
}
