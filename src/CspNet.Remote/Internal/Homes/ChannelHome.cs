using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal;

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
    private readonly ValueCodec<T>? _codec; // null in stand-alone homes, which nothing remote reaches
    private readonly long _maxValueSize;
    private readonly Lock _lock = new();
    private string? _singleWriter; // who holds the single writing end, when the kind has one

    internal ChannelHome(string name, ConstructKind kind, IBuffer<T>? buffer, int bufferCapacity, ValueCodec<T>? codec, long maxValueSize)
        : base(name, kind, codec?.WireName ?? typeof(T).FullName ?? typeof(T).Name, bufferCapacity)
    {
        _channel = kind.CreateChannel(buffer);
        _codec = codec;
        _maxValueSize = maxValueSize;
    }

    internal CspChannel<T> Channel => _channel;

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
                    return new WriterEnd(this, _channel.Out, single: true);
                }

                return new WriterEnd(this, _channel.CreateOut(), single: false);
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
                    await end.WriteAsync(item, ct).ConfigureAwait(false);
                    return OpResult.Ok;
                },
                cancellationToken);

        internal override void Poison() => end.Poison();

        internal override void Detach()
        {
            if (single)
            {
                home.ReleaseSingleWriter();
            }
        }

        internal override void Lost(string peer)
        {
            // The only writer of a One2One or One2Any is gone for good: a reader waiting on it would
            // wait forever, so the channel is poisoned, as the writer would have done on its way out.
            // A lost writer of a shared writing end takes nothing with it: the others go on.
            if (single)
            {
                string kind = home.Kind.WireName(), name = home.Name;
                home._channel.Core.Poison(() => new PeerLostException(
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
                    await home._channel.Core.WhenHoldableAsync(ct).ConfigureAwait(false);
                    ready();
                    return OpResult.Ok;
                },
                cancellationToken);

        internal override Task<OpResult> ReserveAsync(bool wait, Action<ReadOnlyMemory<byte>> reserved, Task<bool> settled, CancellationToken cancellationToken) =>
            Run(
                async ct =>
                {
                    ChannelCore<T> core = home._channel.Core;
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
                        reserved(ValueEncoder.Encode(home._codec!, hold.Item, long.MaxValue));
                        accept = await settled.ConfigureAwait(false);
                    }
                    finally
                    {
                        if (accept)
                        {
                            ChannelCore<T>.Commit(hold);
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
                    return new OpResult(Outcome.Ok, Value: ValueEncoder.Encode(home._codec!, item, long.MaxValue));
                },
                cancellationToken);

        internal override void Poison() => end.Poison();
    }
}
