using System;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// The buffers a moving home can rebuild at the program that takes it (link.proto, Handover
/// buffer_kind and buffer_slots): the library's own, by kind and capacity. A user's
/// <see cref="IBuffer{T}"/> has no such description, so its channel does not move.
/// </summary>
internal static class BufferKinds
{
    internal const string Fifo = "fifo";
    internal const string Infinite = "infinite";
    internal const string OverwriteOldest = "overwrite-oldest";

    /// <summary>The kind and capacity of <paramref name="buffer"/>; null kind if it cannot be rebuilt elsewhere.</summary>
    internal static (string? Kind, int Slots) Describe<T>(IBuffer<T>? buffer) => buffer switch
    {
        FifoBuffer<T> fifo => (Fifo, fifo.Capacity),
        InfiniteBuffer<T> => (Infinite, 0),
        OverwriteOldestBuffer<T> overwrite => (OverwriteOldest, overwrite.Capacity),
        _ => (null, 0),
    };

    /// <summary>An empty buffer of <paramref name="kind"/> and <paramref name="slots"/>; null for an unbuffered channel (empty kind).</summary>
    internal static IBuffer<T>? Create<T>(string kind, int slots) => kind switch
    {
        "" => null,
        Fifo when slots > 0 => new FifoBuffer<T>(slots),
        Infinite => new InfiniteBuffer<T>(),
        OverwriteOldest when slots > 0 => new OverwriteOldestBuffer<T>(slots),
        _ => throw new InvalidOperationException($"A buffer of kind '{kind}' and capacity {slots} is not one this program can build."),
    };
}
