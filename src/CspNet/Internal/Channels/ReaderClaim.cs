using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// A parked plain reader set aside by <see cref="CspChannel{T}.TryClaimReader"/> for a writer that
/// decides elsewhere (a remote output guard): settled exactly once, by
/// <see cref="CspChannel{T}.Deliver"/> or <see cref="CspChannel{T}.Release(ReaderClaim{T})"/>.
/// </summary>
internal sealed class ReaderClaim<T>
{
    private readonly Waiter<T> _reader;
    private int _settled;

    internal ReaderClaim(CspChannel<T> channel, Waiter<T> reader)
    {
        Channel = channel;
        _reader = reader;
    }

    internal CspChannel<T> Channel { get; }

    /// <summary>Marks the claim settled; returns the claimed reader the first time, null after.</summary>
    internal Waiter<T>? Settle() => Interlocked.Exchange(ref _settled, 1) == 0 ? _reader : null;
}
