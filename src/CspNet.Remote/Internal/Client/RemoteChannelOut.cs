using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Processes;
using CspNet.Remote.Internal.Diagnostics;
using CspNet.Remote.Internal.Serialization;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// A writing end whose channel lives in another program. A write sends the value over the link
/// and completes when the home answers that a reader took it (or the buffer accepted it), exactly
/// as a local write; a cancelled write is cancelled at the home, and whichever of the two happened
/// first there is what the caller sees.
/// </summary>
/// <remarks>
/// <para>
/// A buffered channel streams instead (<see cref="CspNodeOptions.PipelineBufferedWrites"/>): the
/// home grants the end credits, each a slot of its buffer reserved for one value, and a write that
/// can spend one completes as soon as its value is handed to the link. Its value holds a slot of
/// the buffer already, so the write is as complete as a local buffered write; the buffer's capacity
/// stays exact. A write that finds no credit waits for the home as above (the home places it in a
/// slot reserved for the end if credits are on their way here; the next write spends the others).
/// Each process waits for its write before the next, so its values reach the home in order, spent
/// credit or not.
/// </para>
/// <para>Like a local end, it belongs to one process; a shared (Any) end may be used by several.</para>
/// </remarks>
internal sealed class RemoteChannelOut<T> : IChannelOut<T>
{
    private readonly PeerLink _link;
    private readonly uint _handle;
    private readonly ValueCodec<T> _codec;
    private readonly string _name;
    private readonly long _maxValueSize;
    private readonly WriteCredits? _credits;

    internal RemoteChannelOut(PeerLink link, uint handle, ValueCodec<T> codec, string name, long maxValueSize)
    {
        _link = link;
        _handle = handle;
        _codec = codec;
        _name = name;
        _maxValueSize = maxValueSize;
        _credits = link.OpenCredits(handle);
    }

    /// <summary>The link this end writes on.</summary>
    internal PeerLink Link => _link;

    public void Write(T value)
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Write(value)", "WriteAsync(value)");
        ValueTask write = WriteAsync(value);
        if (!write.IsCompletedSuccessfully)
        {
#pragma warning disable RS0030 // The synchronous Write() over WriteAsync() when it did not complete at once.
            write.AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
        }
    }

    public ValueTask WriteAsync(T value, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        PooledValueBuffer bytes;
        PendingOp op;
        Activity? activity = RemoteTracing.StartSend(_name);
        long started = RemoteMetrics.StartWrite();
        try
        {
            if (_credits?.Poisoned is { } poisoned)
            {
                // The home said the channel is poisoned: fail as its answer to a plain write would.
                throw new PoisonException(poisoned);
            }

            bytes = Encode(value);
            if (_credits is { } credits)
            {
                lock (credits.Gate)
                {
                    if (credits.TryTakeLocked())
                    {
                        // Complete when handed to the link: no round trip to time.
                        _link.SendCredited(_handle, bytes, RemoteTracing.Traceparent(activity));
                        activity?.Stop();
                        return default;
                    }

                    credits.BeginPlainLocked();
                    op = SendPlain(bytes, activity);
                }
            }
            else
            {
                op = SendPlain(bytes, activity);
            }
        }
#pragma warning disable CA1031 // Not swallowed: it faults the returned ValueTask, as an async method would.
        catch (Exception e)
#pragma warning restore CA1031
        {
            RemoteTracing.Stop(activity, e.Message);
            return ValueTask.FromException(Named(e));
        }

        return WaitForHomeAsync(op, bytes, activity, started, cancellationToken);
    }

    // The link's failure is shared by all its ends and the encoder knows no names: say which
    // channel (and, for a value too large, whose limit), as a home's answer would.
    private Exception Named(Exception e) =>
        e is PeerLostException lost ? new PeerLostException($"Writing to '{_name}' failed. {lost.Message}", lost) : e;

    private PooledValueBuffer Encode(T value)
    {
        try
        {
            return ValueEncoder.EncodePooled(_codec, value, _maxValueSize);
        }
        catch (InvalidOperationException tooLarge)
        {
            throw new InvalidOperationException($"Writing to '{_name}' failed in the program '{_link.LocalProgram}': {tooLarge.Message}", tooLarge);
        }
    }

    /// <summary>A plain write: its bytes on the bulk lane if they go there (<see cref="PendingOp.ViaLane"/>), else in chunks on the link.</summary>
    private PendingOp SendPlain(PooledValueBuffer bytes, Activity? activity, bool linkOnly = false)
    {
        PendingOp op = _link.Begin();
        string traceparent = RemoteTracing.Traceparent(activity);
        if (!linkOnly && _link.TrySendOnLane(op.Id, bytes.WrittenMemory))
        {
            op.ViaLane = true;
            _link.Send(new ClientFrame { Write = new Write { Handle = _handle, OpId = op.Id, Lane = true, Traceparent = traceparent } });
            return op;
        }

        _link.SendValue(op.Id, bytes.WrittenMemory, last => new ClientFrame { Write = new Write { Handle = _handle, OpId = op.Id, Data = last, Traceparent = traceparent } });
        return op;
    }

    /// <summary>A write without a credit: one round trip, exact under cancellation (see the class).</summary>
    private async ValueTask WaitForHomeAsync(PendingOp op, PooledValueBuffer bytes, Activity? activity, long started, CancellationToken cancellationToken)
    {
        Completion completion = await _link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
        if (op.ViaLane && completion is { Lost: null, Outcome: Outcome.Error, Status: Grpc.Core.StatusCode.Aborted })
        {
            // The lane failed before the home had the value, and the home wrote nothing: the value
            // goes again, on the link, under a new op (link.proto, Write.lane). Exactly once.
            op = SendPlain(bytes, activity, linkOnly: true);
            completion = await _link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
        }

        RemoteMetrics.EndWrite(started);
        _credits?.EndPlain(completion.Lost is null && op.CreditUsed);
        if (completion.Lost is null)
        {
            // The home answered, so it had every frame: nothing reads the buffer any more.
            bytes.Return();
        }

        try
        {
            completion.ThrowIfFailed($"Writing to '{_name}'", cancellationToken);
        }
        catch (Exception e)
        {
            RemoteTracing.Stop(activity, e.Message);
            throw;
        }

        activity?.Stop();
    }

    public void Poison()
    {
        _link.Poison(_handle);

        // Credited writes would not hear of it from the home in time: fail them here, as the
        // home would fail a plain write after this poison.
        _credits?.Poison($"'{_name}' is poisoned: this end poisoned it.");
    }

    public override string ToString() => $"writing end of '{_name}' at {_link.Target}";
}
