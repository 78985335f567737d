using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Internal;

/// <summary>
/// What a home in another layer (the distributed layer's channel homes, docs/HOSTING-CONTRACT.md)
/// needs from a core channel beyond its public ends: holding a value for a reader that decides
/// elsewhere, reserving buffer room for a writer that writes from elsewhere, waiting for either
/// to become possible, and poisoning with a reason the core cannot see.
/// </summary>
/// <remarks>
/// <para>
/// Every <see cref="CspChannel{T}"/> implements it explicitly, so the members appear only where a
/// channel is used as a hosted channel. The distributed layer reaches the core's internals through
/// this interface and <see cref="ChannelHold{T}"/> alone (an architecture test keeps it so): the
/// seam is written down once, like the public guard contract (docs/GUARD-CONTRACT.md).
/// </para>
/// <para>
/// Every member is safe to call from any thread and takes the channel's lock itself; none blocks
/// a thread. A hold is settled exactly once, by <see cref="Commit"/> or <see cref="Release(ChannelHold{T})"/>;
/// a reader claim exactly once, by <see cref="Deliver"/> or <see cref="Release(ReaderClaim{T})"/>.
/// A reservation is used exactly once, by <see cref="PutReserved"/> or given back by
/// <see cref="ReleaseReservations"/>.
/// </para>
/// </remarks>
/// <typeparam name="T">The type of the channel's values.</typeparam>
internal interface IHostedChannel<T>
{
    /// <summary>
    /// Sets the next value aside at once (from the buffer or a parked plain writer), or returns
    /// null if there is none. Throws <see cref="PoisonException"/> once the channel is poisoned and drained.
    /// </summary>
    ChannelHold<T>? TryHold();

    /// <summary>As <see cref="TryHold"/>, waiting without a thread until there is a value. A cancelled hold holds nothing.</summary>
    ValueTask<ChannelHold<T>> HoldAsync(CancellationToken cancellationToken);

    /// <summary>Completes when a hold could take something (a value or the poison); takes nothing.</summary>
    ValueTask WhenHoldableAsync(CancellationToken cancellationToken);

    /// <summary>The hold's reader took the value: a held writer's write completes now.</summary>
    void Commit(ChannelHold<T> hold);

    /// <summary>Gives a held value back where it was, in the writer's order.</summary>
    void Release(ChannelHold<T> hold);

    /// <summary>
    /// How many values the buffer holds before writers wait, as reservations see it: 0 if nothing
    /// can be reserved, <see cref="int.MaxValue"/> for a buffer that never fills.
    /// </summary>
    int ReservableCapacity { get; }

    /// <summary>Reserves up to <paramref name="max"/> free buffer slots; returns how many it did (0 if none).</summary>
    int TryReserve(int max);

    /// <summary>Puts a value into a slot reserved before: never waits, and is never refused for room.</summary>
    void PutReserved(T item);

    /// <summary>Gives back <paramref name="count"/> reserved slots that will not be filled.</summary>
    void ReleaseReservations(int count);

    /// <summary>Completes when a reservation could succeed now or the channel is poisoned; reserves nothing.</summary>
    ValueTask WhenReservableAsync(CancellationToken cancellationToken);

    /// <summary>
    /// Sets one parked plain reader aside (its read stays incomplete) if a write could hand it a
    /// value now, or returns null. Throws <see cref="PoisonException"/> once the channel is poisoned.
    /// Readers parked by an alternation are never claimed.
    /// </summary>
    ReaderClaim<T>? TryClaimReader();

    /// <summary>Completes when a reader claim could succeed now or the channel is poisoned; claims nothing.</summary>
    ValueTask WhenReaderClaimableAsync(CancellationToken cancellationToken);

    /// <summary>The claimed reader's read completes now with <paramref name="item"/>.</summary>
    void Deliver(ReaderClaim<T> claim, T item);

    /// <summary>Gives a claimed reader back: first in line, or paired with a value that came meanwhile.</summary>
    void Release(ReaderClaim<T> claim);

    /// <summary>Whether the channel is poisoned (the public <see cref="CspChannel{T}.IsPoisoned"/>).</summary>
    bool IsPoisoned { get; }

    /// <summary>Completes when the channel is poisoned (at once if it is).</summary>
    Task WhenPoisoned();

    /// <summary>Poisons the channel so that every party fails with the exception <paramref name="reason"/> makes.</summary>
    void Poison(Func<PoisonException> reason);

    /// <summary>The exception a party of the poisoned channel gets (a fresh one each call).</summary>
    PoisonException CreatePoisoned();
}
