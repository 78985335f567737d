using System;
using System.Buffers;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Serialization;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// A named channel hosted here: an ordinary core channel of the named kind, plus the rules for
/// which ends other programs may attach. A remote write runs as an async write on the core
/// channel, so it completes (and its Completed frame leaves) only when a reader, local or
/// remote, has taken the value or the buffer accepted it; a remote read runs as an async read.
/// Cancellation is the core's, which is exact: a cancelled operation moved nothing.
/// </summary>
internal sealed class ChannelHome<T> : Home
{
    private readonly CspChannel<T> _channel;
    private readonly IHostedChannel<T> _hosted; // the same channel, seen through the hosting contract
    private readonly ValueCodec<T>? _codec; // null in stand-alone homes, which nothing remote reaches
    private readonly long _maxValueSize;
    private readonly Lock _lock = new();
    private string? _singleWriter; // who holds the single writing end, when the kind has one
    private readonly bool _unbuffered;
    private readonly string? _bufferKind; // how a program taking the home over rebuilds the buffer; null: it cannot
    private readonly int _bufferSlots;

    internal ChannelHome(string name, NameKind kind, IBuffer<T>? buffer, int bufferCapacity, ValueCodec<T>? codec, long maxValueSize)
        : base(name, kind, codec?.WireName ?? typeof(T).FullName ?? typeof(T).Name, bufferCapacity)
    {
        _channel = kind.CreateChannel(buffer);
        _hosted = _channel;
        _unbuffered = buffer is null;
        (_bufferKind, _bufferSlots) = BufferKinds.Describe(buffer);
        _codec = codec;
        _maxValueSize = maxValueSize;
    }

    internal CspChannel<T> Channel => _channel;

    /// <summary>
    /// An Any2Any channel, and a One2Any channel (whose only writer leaves with its home), move when
    /// their home leaves, if other programs hold ends: the remote operations are quiesced (each
    /// cancelled exactly, or done), the writers' credits stopped, and the buffer's values travel in
    /// order. A buffer this program cannot describe (a user's <see cref="IBuffer{T}"/>) stays, and
    /// the channel with it; a channel with one reading end lives with that end.
    /// </summary>
    internal override bool CanMove => CanFollow && HasHolders;

    /// <summary>
    /// Whether another program could rebuild this channel (an Any2Any or One2Any, unbuffered or with a
    /// buffer this program can describe, that other programs can reach): this program's own ends then
    /// follow it when it moves away live.
    /// </summary>
    internal bool CanFollow =>
        Kind is NameKind.Any2Any or NameKind.One2Any && (_unbuffered || _bufferKind is not null) && _codec is not null;

    internal override string? LiveMoveRefusal
    {
        get
        {
            if (Kind is not (NameKind.Any2Any or NameKind.One2Any))
            {
                return "its only reading end lives with its home, so it moves only with that program. Use an Any2Any or One2Any channel for one that moves to where it is read.";
            }

            if (_codec is null)
            {
                return "it is local to its program.";
            }

            if (!_unbuffered && _bufferKind is null)
            {
                return "its buffer is the program's own IBuffer<T>, which another program cannot rebuild. Use FifoBuffer, InfiniteBuffer or OverwriteOldestBuffer for a buffered channel that moves.";
            }

            return HasHolders ? null : "no other program holds ends of it.";
        }
    }

    /// <summary>The channel as a program taking it over must build it (link.proto, Handover): a buffer of the same kind and capacity.</summary>
    internal static ChannelHome<T> ForHandover(Handover handover, ValueCodec<T> codec, long maxValueSize) =>
        new(handover.Name, NameProtocol.ParseKind(handover.Kind), BufferKinds.Create<T>(handover.BufferKind, handover.BufferSlots), handover.BufferCapacity, codec, maxValueSize);

    internal override Handover DescribeForHandover() => new()
    {
        Name = Name,
        Kind = Kind.WireName(),
        ValueType = ValueType,
        BufferCapacity = BufferCapacity,
        Poisoned = _hosted.IsPoisoned,
        PoisonMessage = _hosted.IsPoisoned ? _hosted.CreatePoisoned().Message : string.Empty,
        BufferKind = _bufferKind ?? string.Empty,
        BufferSlots = _bufferSlots,
    };

    internal override (Handover Offer, IReadOnlyList<byte[]> Values) TakeForHandover(string leaving)
    {
        Handover offer = DescribeForHandover();
        if (Kind == NameKind.One2Any && !offer.Poisoned && !WriterLivesElsewhere(leaving))
        {
            // Its only writer leaves with this program: the readers read what it wrote, then nothing can come.
            offer.Poisoned = true;
            offer.PoisonMessage = $"One2Any '{Name}' is poisoned: its only writer's program, {leaving}, left. The values it had written were read first.";
        }

        if (_unbuffered)
        {
            return (offer, []);
        }

        // This program's own ends stop here (a poisoned channel's buffered values stay readable),
        // so that every value is taken out exactly once: into the offer, or by a local reader before.
        _hosted.Poison(() => new PoisonException($"{Kind.WireName()} '{Name}' left {leaving} with its home: the ends of {leaving} cannot use it any more."));
        List<byte[]> values = TakeValues();
        offer.ValueCount = (uint)values.Count;
        return (offer, values);
    }

    internal override (Handover Offer, IReadOnlyList<byte[]> Values) TakeForLiveMove()
    {
        // This program's own ends have stopped at the core (they follow the channel), so the buffer
        // is not poisoned: if the move does not happen, the values go back and the channel goes on.
        Handover offer = DescribeForHandover();
        List<byte[]> values = _unbuffered ? [] : TakeValues();
        offer.ValueCount = (uint)values.Count;
        return (offer, values);
    }

    /// <summary>Takes the buffered values out, in order, each encoded.</summary>
    private List<byte[]> TakeValues()
    {
        List<byte[]> values = [];
        while (TryHoldNext() is { } hold)
        {
            try
            {
                PooledValueBuffer encoded = ValueEncoder.EncodePooled(_codec!, hold.Item, long.MaxValue);
                values.Add(encoded.WrittenMemory.ToArray());
                encoded.Return();
            }
            catch
            {
                _hosted.Release(hold);
                throw;
            }

            _hosted.Commit(hold);
        }

        return values;
    }

    private ChannelHold<T>? TryHoldNext()
    {
        try
        {
            return _hosted.TryHold();
        }
        catch (PoisonException)
        {
            return null; // poisoned and drained
        }
    }

    internal override void Restore(IReadOnlyList<byte[]> values)
    {
        if (values.Count > 0 && _hosted.TryReserve(values.Count) != values.Count)
        {
            throw new InvalidOperationException($"{values.Count} values do not fit the buffer of {Kind.WireName()} '{Name}'.");
        }

        foreach (byte[] value in values)
        {
            if (TooLarge(value.Length) is { } tooLarge)
            {
                throw tooLarge;
            }

            _hosted.PutReserved(_codec!.Read(new ReadOnlySequence<byte>(value)));
        }
    }

    internal override void PoisonAsMoved(string message) => _hosted.Poison(() => new PoisonException(message));

    /// <summary>An end for a process of this program: the core's own end, at the core's speed.</summary>
    internal object LocalEnd(bool reader, string self)
    {
        if (reader)
        {
            if (Kind.HasSingleReader() && !Kind.CreatedBy(reader: true))
            {
                throw new InvalidOperationException($"{Kind.WireName()} '{Name}' has one reading end, and it is already taken.");
            }

            return Kind.HasSingleReader() ? _channel.In : _channel.CreateIn();
        }

        if (Kind.HasSingleWriter())
        {
            TakeSingleWriter(self);
            return _channel.Out;
        }

        return _channel.CreateOut();
    }

    protected override HomeEnd AttachRole(Role role, string peer)
    {
        switch (role)
        {
            case Role.Writer:
                if (Kind.HasSingleWriter())
                {
                    TakeSingleWriter(peer);
                    return new WriterEnd(this, _channel.Out, single: true) { Peer = peer };
                }

                return new WriterEnd(this, _channel.CreateOut(), single: false) { Peer = peer };
            case Role.Reader:
                if (Kind.HasSingleReader())
                {
                    throw RoleRefused(role, "its only reading end lives in the program that hosts it; only that program reads.");
                }

                return new ReaderEnd(this, _channel.CreateIn());
            default:
                throw RoleRefused(role, "a channel has only reader and writer ends.");
        }
    }

    private void TakeSingleWriter(string who)
    {
        lock (_lock)
        {
            if (_singleWriter is not null)
            {
                throw RoleRefused(Role.Writer, $"its single writing end is already held by {_singleWriter}. Use an Any2One or Any2Any channel for several writers.");
            }

            _singleWriter = who;
        }
    }

    /// <summary>Whether the single writing end is held by another program than <paramref name="here"/> (after a live move took the home from its writer): it follows the home.</summary>
    private bool WriterLivesElsewhere(string here)
    {
        lock (_lock)
        {
            return _singleWriter is not null && _singleWriter != here;
        }
    }

    private void ReleaseSingleWriter()
    {
        lock (_lock)
        {
            _singleWriter = null;
        }
    }

    private System.IO.InvalidDataException? TooLarge(long length) =>
        length > _maxValueSize ? new System.IO.InvalidDataException($"The value is {length:N0} bytes, more than the {_maxValueSize:N0} bytes this program accepts (CspNodeOptions.MaxValueSize).") : null;

    private sealed class WriterEnd(ChannelHome<T> home, IChannelOut<T> end, bool single) : HomeEnd
    {
        /// <summary>The program holding the end, for messages.</summary>
        internal string Peer { get; init; } = "another program";
        private CreditGrants<T>? _credits;   // set by OfferCredits, before any operation

        internal override Task<OpResult> WriteAsync(ReadOnlySequence<byte> value, CancellationToken cancellationToken) =>
            Run(
                async ct =>
                {
                    if (home.TooLarge(value.Length) is { } tooLarge)
                    {
                        throw tooLarge;
                    }

                    // Decoded before the write: a malformed value fails here and the channel never sees it.
                    T item = home._codec!.Read(value);
                    if (_credits is not null && !home._channel.IsPoisoned && _credits.Spend())
                    {
                        // The end holds reserved slots (its credits may be on their way to it):
                        // one is this value's, so it never waits for room its own end keeps. (Not
                        // once poisoned: this write has not completed, so it fails as any would.)
                        home._hosted.PutReserved(item);
                        _credits.Grant();
                        return OpResult.OkWithCredit;
                    }

                    await end.WriteAsync(item, ct).ConfigureAwait(false);

                    // Only now: a slot reserved before the value was in would have made this very
                    // write wait for a reader.
                    _credits?.Start();
                    return OpResult.Ok;
                },
                cancellationToken);

        /// <summary>
        /// A selecting writer's watch: fires when a reservation could set something aside now (a slot
        /// of the end's own credits, a free slot, or a parked plain reader) or the channel is poisoned.
        /// </summary>
        internal override Task<OpResult> WatchAsync(Action ready, CancellationToken cancellationToken) =>
            Run(
                async ct =>
                {
                    IHostedChannel<T> core = home._hosted;
                    if (_credits?.HasOutstanding != true)
                    {
                        await WhenSettableAsideAsync(core, ct).ConfigureAwait(false);
                    }

                    ready();
                    return OpResult.Ok;
                },
                cancellationToken);

        internal override bool ReservesForWrites => true;

        internal override Task<OpResult> ReserveForWriteAsync(bool wait, Action reserved, WriteReservation reservation, CancellationToken cancellationToken) =>
            Run(
                async ct =>
                {
                    IHostedChannel<T> core = home._hosted;
                    OfferTarget target;
                    while (!TrySetAside(core, out target))
                    {
                        if (!wait)
                        {
                            return OpResult.Cancelled; // nothing to set aside now, and the client did not want to wait
                        }

                        await WhenSettableAsideAsync(core, ct).ConfigureAwait(false);
                    }

                    // From here the target is settled exactly once: filled by the Deliver that
                    // carries the value, or given back (declined, the end detached, the stream ended).
                    bool placed = false;
                    try
                    {
                        reservation.SetAside((value, tooLarge) => Place(core, target, value, tooLarge));
                        reserved();
                        placed = await reservation.Settled.ConfigureAwait(false);
                    }
                    finally
                    {
                        if (!placed)
                        {
                            GiveBack(core, target);
                        }
                    }

                    return new OpResult(placed ? Outcome.Ok : Outcome.Cancelled, CreditUsed: target.CreditUsed);
                },
                cancellationToken);

        /// <summary>Completes when a reservation for an offer could set something aside (room, or a plain reader where there are no reservable slots) or on poison.</summary>
        private static ValueTask WhenSettableAsideAsync(IHostedChannel<T> core, CancellationToken cancellationToken) =>
            core.ReservableCapacity > 0 ? core.WhenReservableAsync(cancellationToken) : core.WhenReaderClaimableAsync(cancellationToken);

        /// <summary>
        /// Sets aside what the offer's value would go to: a slot the end's credits hold (it never
        /// waits for room its own reservations keep), a free slot, or, on a channel without
        /// reservable slots, a parked plain reader. Throws the poison on a poisoned channel.
        /// </summary>
        private bool TrySetAside(IHostedChannel<T> core, out OfferTarget target)
        {
            if (core.IsPoisoned)
            {
                throw core.CreatePoisoned();
            }

            if (_credits is not null && _credits.Spend())
            {
                target = new OfferTarget(null, CreditUsed: true);
                return true;
            }

            if (core.ReservableCapacity > 0)
            {
                target = default;
                return core.TryReserve(1) == 1;
            }

            target = new OfferTarget(core.TryClaimReader(), CreditUsed: false);
            return target.Reader is not null;
        }

        /// <summary>Places the chosen offer's value where its reservation set it aside; a value that cannot be placed poisons the channel.</summary>
        private bool Place(IHostedChannel<T> core, OfferTarget target, ReadOnlySequence<byte> value, bool tooLarge)
        {
            if (!TryDecode(value, tooLarge, out T? item, out string? why))
            {
                GiveBack(core, target);
                string kind = home.Kind.WireName(), name = home.Name, peer = Peer;
                core.Poison(() => new PoisonException($"{kind} '{name}' is poisoned: a value {peer} offered (its selection had chosen the offer) could not be placed: {why}."));
                return false;
            }

            if (target.Reader is { } reader)
            {
                core.Deliver(reader, item);
            }
            else
            {
                core.PutReserved(item);
                _credits?.Grant();
            }

            return true;
        }

        /// <summary>Decodes a value that came with a reservation or a credit; false, saying why, if it is too large or cannot be decoded.</summary>
        private bool TryDecode(ReadOnlySequence<byte> value, bool tooLarge, [MaybeNullWhen(false)] out T item, [NotNullWhen(false)] out string? why)
        {
            try
            {
                if (tooLarge || home.TooLarge(value.Length) is not null)
                {
                    throw new System.IO.InvalidDataException($"it is larger than the {home._maxValueSize:N0} bytes this program accepts (CspNodeOptions.MaxValueSize)");
                }

                item = home._codec!.Read(value);
                why = null;
                return true;
            }
#pragma warning disable CA1031 // Not swallowed: the caller poisons the channel with it, which every party sees.
            catch (Exception e) when (e is not OutOfMemoryException)
#pragma warning restore CA1031
            {
                item = default;
                why = e.Message;
                return false;
            }
        }

        private void GiveBack(IHostedChannel<T> core, OfferTarget target)
        {
            if (target.Reader is { } reader)
            {
                core.Release(reader);
            }
            else
            {
                core.ReleaseReservations(1);
                _credits?.Grant();
            }
        }

        /// <summary>What a write reservation set aside: a claimed reader, or (null) one buffer slot; whether the slot was one of the end's credits.</summary>
        private readonly record struct OfferTarget(ReaderClaim<T>? Reader, bool CreditUsed);

        internal override void OfferCredits(Action<int, string?> grant) => _credits = CreditGrants<T>.For(home._hosted, grant);

        internal override bool GrantsCredits => _credits is not null;

        internal override void StopCredits() => _credits?.Close();

        internal override bool PutCredited(ReadOnlySequence<byte> value, bool tooLarge)
        {
            if (_credits is null)
            {
                return false;
            }

            IHostedChannel<T> core = home._hosted;
            if (!_credits.Spend())
            {
                PoisonUnplaced(core, "it came without a credit (the writer broke the protocol)");
                return true;
            }

            if (!TryDecode(value, tooLarge, out T? item, out string? why))
            {
                core.ReleaseReservations(1);
                PoisonUnplaced(core, "it could not be decoded: " + why);
                return true;
            }

            core.PutReserved(item);
            _credits.Grant();
            return true;
        }

        internal override void LoseCredited(string why)
        {
            if (_credits is null)
            {
                return;
            }

            IHostedChannel<T> core = home._hosted;
            if (_credits.Spend())
            {
                core.ReleaseReservations(1);
            }

            PoisonUnplaced(core, why);
        }

        /// <summary>
        /// A credited value that cannot be placed is a write its writer saw complete: dropping it
        /// silently while the writer goes on would lose it unnoticed, so the channel is poisoned, saying why.
        /// </summary>
        private void PoisonUnplaced(IHostedChannel<T> core, string why)
        {
            string kind = home.Kind.WireName(), name = home.Name, peer = Peer;
            core.Poison(() => new PoisonException($"{kind} '{name}' is poisoned: a value {peer} wrote (its write had completed, with a credit) could not be placed: {why}."));
        }

        internal override void Poison() => end.Poison();

        internal override void Detach()
        {
            _credits?.Close();
            if (single)
            {
                home.ReleaseSingleWriter();
            }
        }

        internal override void Lost(string peer)
        {
            // Its values that arrived in full are placed already; the slots it had not used go back.
            _credits?.Close();

            // The only writer of a One2One or One2Any is gone for good: a reader waiting on it would
            // wait forever, so the channel is poisoned, as the writer would have done on its way out.
            // A lost writer of a shared writing end takes nothing with it: the others go on.
            if (single)
            {
                string kind = home.Kind.WireName(), name = home.Name;
                home._hosted.Poison(() => new PeerLostException(
                    $"{kind} '{name}' is poisoned: {peer}, which held its only writing end, was lost (it exited, was killed, or went silent)."));
            }
        }
    }

    private sealed class ReaderEnd(ChannelHome<T> home, IChannelIn<T> end) : HomeEnd
    {
        internal override Task<OpResult> WatchAsync(Action ready, CancellationToken cancellationToken) =>
            Run(
                async ct =>
                {
                    await home._hosted.WhenHoldableAsync(ct).ConfigureAwait(false);
                    ready();
                    return OpResult.Ok;
                },
                cancellationToken);

        internal override Task<OpResult> ReserveAsync(bool wait, Action<PooledValueBuffer> reserved, Task<bool> settled, CancellationToken cancellationToken) =>
            Run(
                async ct =>
                {
                    IHostedChannel<T> core = home._hosted;
                    ChannelHold<T>? hold = wait ? await core.HoldAsync(ct).ConfigureAwait(false) : core.TryHold();
                    if (hold is null)
                    {
                        return OpResult.Cancelled; // nothing to set aside now, and the client did not want to wait
                    }

                    // Whatever happens from here (a codec failure, the stream's end), the hold is
                    // settled exactly once: committed only on the client's word.
                    bool accept = false;
                    try
                    {
                        reserved(ValueEncoder.EncodePooled(home._codec!, hold.Item, long.MaxValue));
                        accept = await settled.ConfigureAwait(false);
                    }
                    finally
                    {
                        if (accept)
                        {
                            core.Commit(hold);
                        }
                        else
                        {
                            core.Release(hold);
                        }
                    }

                    return accept ? OpResult.Ok : OpResult.Cancelled;
                },
                cancellationToken);

        internal override Task<OpResult> ReadAsync(CancellationToken cancellationToken) =>
            Run(
                async ct =>
                {
                    T item = await end.ReadAsync(ct).ConfigureAwait(false);
                    return new OpResult(Outcome.Ok, Value: ValueEncoder.EncodePooled(home._codec!, item, long.MaxValue));
                },
                cancellationToken);

        internal override void Poison() => end.Poison();
    }
}
