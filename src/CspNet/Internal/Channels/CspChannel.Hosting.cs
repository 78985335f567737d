using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;

namespace CspNet;

// The hosting contract (IHostedChannel<T>, docs/HOSTING-CONTRACT.md), implemented explicitly: the
// members forward to the holds, reservations and poison of the other parts of this class.
public abstract partial class CspChannel<T> : IHostedChannel<T>
{
    ChannelHold<T>? IHostedChannel<T>.TryHold() => TryHold();

    ValueTask<ChannelHold<T>> IHostedChannel<T>.HoldAsync(CancellationToken cancellationToken) => HoldAsync(cancellationToken);

    ValueTask IHostedChannel<T>.WhenHoldableAsync(CancellationToken cancellationToken) => WhenHoldableAsync(cancellationToken);

    void IHostedChannel<T>.Commit(ChannelHold<T> hold) => Commit(hold);

    void IHostedChannel<T>.Release(ChannelHold<T> hold) => Release(hold);

    int IHostedChannel<T>.ReservableCapacity => ReservableCapacity;

    int IHostedChannel<T>.TryReserve(int max) => TryReserve(max);

    void IHostedChannel<T>.PutReserved(T item) => PutReserved(item);

    void IHostedChannel<T>.ReleaseReservations(int count) => ReleaseReservations(count);

    ValueTask IHostedChannel<T>.WhenReservableAsync(CancellationToken cancellationToken) => WhenReservableAsync(cancellationToken);

    ReaderClaim<T>? IHostedChannel<T>.TryClaimReader() => TryClaimReader();

    ValueTask IHostedChannel<T>.WhenReaderClaimableAsync(CancellationToken cancellationToken) => WhenReaderClaimableAsync(cancellationToken);

    void IHostedChannel<T>.Deliver(ReaderClaim<T> claim, T item) => Deliver(claim, item);

    void IHostedChannel<T>.Release(ReaderClaim<T> claim) => Release(claim);

    Task IHostedChannel<T>.WhenPoisoned() => WhenPoisoned();

    void IHostedChannel<T>.Poison(Func<PoisonException> reason) => Poison(reason);

    PoisonException IHostedChannel<T>.CreatePoisoned() => CreatePoisoned();
}
