using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// A value set aside by <see cref="CspChannel{T}.TryHold"/>: settled exactly once, by
/// <see cref="CspChannel{T}.Commit"/> or <see cref="CspChannel{T}.Release(ChannelHold{T})"/>.
/// </summary>
internal sealed class ChannelHold<T>
{
    private readonly Waiter<T>? _writer;
    private int _settled;

    internal ChannelHold(CspChannel<T> channel, T item, Waiter<T>? writer, long sequence)
    {
        Channel = channel;
        Item = item;
        _writer = writer;
        Sequence = sequence;
    }

    /// <summary>For a buffered value: its place among the values held from the same buffer.</summary>
    internal long Sequence { get; }

    internal CspChannel<T> Channel { get; }

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
