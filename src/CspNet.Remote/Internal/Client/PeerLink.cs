using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;
using CspNet.Remote.Protocol;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// The client side of the one Link stream this program keeps to another program (a home): every
/// end of every construct homed there shares it, each operation tagged with its own op_id.
/// </summary>
/// <remarks>
/// Thread-safe: any number of processes run operations at once. Frames leave through one queue
/// drained by one writer (a gRPC stream takes one write at a time); replies are read by one loop
/// and matched to operations by op_id. When the stream breaks, or the peer stays silent past the
/// keep-alive timeout, every pending and later operation fails with <see cref="PeerLostException"/>.
/// </remarks>
internal sealed partial class PeerLink : IAsyncDisposable
{
    /// <summary>Channels a leaving home may say how they left (HomeLeft) that a link remembers: past it, their ends find the home lost.</summary>
    private const int MaxHomesLeft = 1024;

    private readonly ILinkNode _node;
    private readonly GrpcChannel _channel;
    private readonly AsyncDuplexStreamingCall<ClientFrame, HomeFrame> _call;
    private readonly Channel<ClientFrame> _out = Channel.CreateUnbounded<ClientFrame>(new UnboundedChannelOptions { SingleReader = true });
    private readonly ConcurrentDictionary<ulong, PendingOp> _ops = new();
    private readonly ConcurrentDictionary<uint, TaskCompletionSource<Attached>> _attaching = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly TaskCompletionSource<Hello> _hello = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ConcurrentDictionary<uint, WriteCredits> _credits = new();
    private readonly ConcurrentDictionary<string, string> _homesLeft = new(StringComparer.Ordinal); // channels that left with the home's program: their poison, empty if they moved
    private HandoverValues? _handoverValues; // the buffered values of channels a leaving home is about to offer
    private readonly ConcurrentQueue<PooledValueBuffer> _creditedBuffers = new();
    private readonly Lock _creditedOrder = new();
    private Task _reader = Task.CompletedTask;
    private Task _writer = Task.CompletedTask;
    private long _nextOp;
    private long _creditedLaneWrites;
    private int _nextHandle;
    private volatile Exception? _failure;
    private volatile bool _homeTakesBatches; // the home's Hello said frame_batches
    private long _arrayLaneWrites;
    private BulkLane? _lane; // set once, before the link is handed out: the home offered one and it opened
    private readonly ConcurrentDictionary<ulong, CreditedOnLane> _creditedOnLane = new(); // credited lane values the home has not yet answered
    private TaskCompletionSource? _creditedOnLaneAnswered; // set by a leaving link: done when the last of them is answered

    private PeerLink(ILinkNode node, string host, int port)
    {
        _node = node;
        Target = $"{host}:{port}";
        // A program with the cluster's certificates dials every program over TLS (they all serve
        // it); otherwise the cluster key may only travel to this machine.
        Uri address = NodeTransport.PeerAddress(node.Options, host, port);
        if (!Security.Certificates.MayCarrySecrets(address))
        {
            throw new InvalidOperationException(
                $"The program at {Target} is on another machine and the link is not encrypted: the cluster key would travel in clear text. Give every program CspNodeOptions.Certificate and CspNodeOptions.TrustedCertificate (docs/DEPLOYING.md).");
        }

        _channel = NodeTransport.CreateChannel(node.Options, address);
        // The Link method with this program's marshallers (pooled receive buffers), not the generated client's.
        _call = _channel.CreateCallInvoker().AsyncDuplexStreamingCall(
            LinkMarshaller.Shared.Connect, null, new CallOptions(NodeTransport.CallHeaders(node.Options), cancellationToken: _stop.Token));
    }

    /// <summary>This program's label (CspNodeOptions.ProgramLabel), for messages.</summary>
    internal string LocalProgram => _node.ProgramLabel;

    /// <summary>host:port of the home, for messages.</summary>
    internal string Target { get; }

    /// <summary>The home's incarnation, from its Hello: a new run of that program has another.</summary>
    internal string PeerIncarnation { get; private set; } = string.Empty;

    /// <summary>The other program's label (CspNodeOptions.ProgramLabel), for messages; empty until it has said hello.</summary>
    internal string PeerProgram { get; private set; } = string.Empty;

    internal bool IsFailed => _failure is not null;

    /// <summary>
    /// How channel <paramref name="name"/> left with this link's program (link.proto, HomeLeft): its
    /// poison, empty if it moved; null if the program did not say.
    /// </summary>
    internal string? HomeLeft(string name) => _homesLeft.TryGetValue(name, out string? poison) ? poison : null;

    /// <summary>
    /// Homes this program took over this link whose old home has not confirmed the move yet:
    /// true once it did (it moved the name), false if it cannot any more.
    /// </summary>
    private readonly ConcurrentDictionary<string, TaskCompletionSource<bool>> _takesUnconfirmed = new(StringComparer.Ordinal);

    /// <summary>The old home moved the name of the channel this program took (its BecomeHome answer said so).</summary>
    internal void ConfirmTake(string name)
    {
        if (_takesUnconfirmed.TryRemove(name, out TaskCompletionSource<bool>? take))
        {
            take.TrySetResult(true);
        }
    }

    /// <summary>Tests only, by channel name: called when this link has settled a take (the channel kept or dropped).</summary>
    internal static ConcurrentDictionary<string, Action> TakeSettledForTests { get; } = new(StringComparer.Ordinal);

    /// <summary>Why the link failed (what its operations were told), or null while it works.</summary>
    internal Exception? Failure => _failure;

    internal static async Task<PeerLink> ConnectAsync(ILinkNode node, string host, int port, CancellationToken cancellationToken)
    {
        var link = new PeerLink(node, host, port);
        link._writer = link.PumpAsync();
        link._reader = link.ReadLoopAsync();
        link.Send(new ClientFrame { Hello = new Hello { ProtocolVersion = 1, Incarnation = node.Incarnation, Program = node.ProgramLabel, WriteCredits = node.Options.PipelineBufferedWrites, BulkLane = node.Options.BulkLane && !OperatingSystem.IsWindows(), LanePlaced = true, LaneBytes = true } });
        try
        {
            Hello hello = await link._hello.Task.WaitAsync(node.Options.PeerTimeout, cancellationToken).ConfigureAwait(false);
            link.PeerIncarnation = hello.Incarnation;
            link.PeerProgram = hello.Program;
            if (node.Options.BulkLane)
            {
                // A lane that cannot be opened leaves the link alone.
                link._lane = await BulkLane.ConnectAsync(hello, host, node.Options, cancellationToken).ConfigureAwait(false);
            }

            return link;
        }
        catch (TimeoutException e)
        {
            await link.DisposeAsync().ConfigureAwait(false);
            throw new PeerLostException($"The program at {link.Target} did not answer within {node.Options.PeerTimeout.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout): check that it still runs and that this machine reaches that address, or raise PeerTimeout on a loaded machine.", e);
        }
        catch
        {
            await link.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Attaches an end to the named construct; throws what the home refused, at the getter.</summary>
    internal async Task<uint> AttachAsync(string name, NameKind kind, string valueType, Role role, CancellationToken cancellationToken)
    {
        uint handle = (uint)Interlocked.Increment(ref _nextHandle);
        var reply = new TaskCompletionSource<Attached>(TaskCreationOptions.RunContinuationsAsynchronously);
        _attaching[handle] = reply;
        Send(new ClientFrame { Attach = new Attach { Handle = handle, Name = name, Kind = kind.WireName(), ValueType = valueType, Role = role } });
        ThrowIfFailed();
        Attached attached;
        try
        {
            attached = await reply.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _attaching.TryRemove(handle, out _);
        }

        if (attached.Status != (int)StatusCode.OK)
        {
            throw (StatusCode)attached.Status == StatusCode.NotFound
                ? new PeerLostException(attached.Message)
                : new InvalidOperationException($"Cannot use '{name}' here: {attached.Message}");
        }

        return handle;
    }

    /// <summary>
    /// Closes the end <paramref name="handle"/> at the home and waits until its place there is free
    /// (link.proto, Detach). Credits granted to it afterwards are ignored. A lost link frees the
    /// place too (the home releases the ends of a lost program), so it ends the wait quietly.
    /// </summary>
    internal async Task DetachAsync(uint handle, CancellationToken cancellationToken)
    {
        _credits.TryRemove(handle, out _);
        PendingOp op = Begin();
        Send(new ClientFrame { Detach = new Detach { Handle = handle, OpId = op.Id } });
        await op.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The credits the home will grant the writing end <paramref name="handle"/>; null if this program asks for none.</summary>
    internal WriteCredits? OpenCredits(uint handle) =>
        _node.Options.PipelineBufferedWrites ? _credits.GetOrAdd(handle, static _ => new WriteCredits()) : null;

    /// <summary>
    /// Sends a write that spends a credit: no answer comes. <paramref name="bytes"/> goes back to the
    /// pool once the pump has written the Write frame (after its chunks), which is when gRPC has
    /// copied the last of it. A value queued on the lane is sent by <see cref="SendQueuedOnLane"/>.
    /// </summary>
    internal void SendCredited(uint handle, PooledValueBuffer bytes, string traceparent, bool bytesValue = false)
    {
        ThrowIfFailed();
        if (bytes.WrittenMemory.Length >= _node.Options.BulkLaneThreshold && _lane is { IsUsable: true } lane
            && TrySendCreditedOnLane(new CreditedOnLane(handle, bytes, null, traceparent), lane, (bytes.WrittenMemory, bytesValue), static (lane, id, value) => lane.TrySend(id, value.WrittenMemory, value.bytesValue)))
        {
            return;
        }

        SendCreditedOnLink((ulong)Interlocked.Increment(ref _nextOp), handle, bytes, traceparent);
    }

    /// <summary>
    /// Sends a credited write of a <c>byte[]</c> value on the bulk lane from the value's own array
    /// (no encode copy); false if it does not go on the lane (the caller encodes it and uses
    /// <see cref="SendCredited"/>). The write completes before the value is sent: the array is not
    /// to change after it was written (as with a local channel, whose reader gets the array itself).
    /// If the lane does not bring it, the array is encoded then and the value sent on the link.
    /// </summary>
    internal bool TrySendCreditedBytesValue(uint handle, byte[] value, string traceparent)
    {
        ThrowIfFailed();
        if (!TakesBytesValueOnLane(value.Length) || _lane is not { } lane
            || !TrySendCreditedOnLane(new CreditedOnLane(handle, null, value, traceparent), lane, value, static (lane, id, array) => lane.TrySendBytesValue(id, array)))
        {
            return false;
        }

        Interlocked.Increment(ref _arrayLaneWrites);
        return true;
    }

    private bool TrySendCreditedOnLane<TValue>(CreditedOnLane sent, BulkLane lane, TValue value, Func<BulkLane, ulong, TValue, bool> queue)
    {
        // The home answers a credited lane value (OK once placed, alone or in a LanePlaced
        // frame): the bytes are kept until then. Registered before anything is sent, so that
        // the answer always finds it.
        ulong id = (ulong)Interlocked.Increment(ref _nextOp);
        _creditedOnLane[id] = sent;
        if (!queue(lane, id, value))
        {
            _creditedOnLane.TryRemove(id, out _);
            return false;
        }

        Send(new ClientFrame { Write = new Write { Handle = sent.Handle, OpId = id, Credited = true, Lane = true, Traceparent = sent.Traceparent } });
        Interlocked.Increment(ref _creditedLaneWrites);
        if (_failure is not null)
        {
            // Registered after the loss swept the table: the link is gone, so is the answer.
            ForgetCreditedOnLane(id);
        }

        return true;
    }

    private void SendCreditedOnLink(ulong id, uint handle, PooledValueBuffer bytes, string traceparent)
    {

        // Credited Write frames reach the pump in the order their buffers are queued here.
        lock (_creditedOrder)
        {
            _creditedBuffers.Enqueue(bytes);
            SendValue(id, bytes.WrittenMemory, last => new ClientFrame { Write = new Write { Handle = handle, OpId = id, Data = last, Credited = true, Traceparent = traceparent } });
        }
    }

    /// <summary>
    /// The home's answer to credited lane value <paramref name="id"/>; false if it is none of them.
    /// ABORTED: the lane did not bring it and the home holds its place in order, so it goes again
    /// on the link as a credited Write under the same op_id (unanswered). Anything else: the home
    /// has it, and the bytes go back.
    /// </summary>
    private bool AnswerCreditedOnLane(ulong id, Completed? completed)
    {
        if (!_creditedOnLane.TryRemove(id, out CreditedOnLane sent))
        {
            return false;
        }

        if (completed is { Outcome: Outcome.Error, Status: (int)StatusCode.Aborted })
        {
            // A value sent from its own array is encoded only now (the array itself never goes to a pool).
            SendCreditedOnLink(id, sent.Handle, sent.Bytes ?? ValueEncoder.EncodeBytesValue(sent.Array!), sent.Traceparent);
        }
        else
        {
            sent.Bytes?.Return();
        }

        AnsweredCreditedOnLane();
        return true;
    }

    /// <summary>A credited lane value whose link is gone: the lane may still be reading its bytes, so they are left to the GC.</summary>
    private void ForgetCreditedOnLane(ulong id)
    {
        if (_creditedOnLane.TryRemove(id, out _))
        {
            AnsweredCreditedOnLane();
        }
    }

    private void AnsweredCreditedOnLane()
    {
        Interlocked.MemoryBarrier(); // against a leaving link's Exchange: one of the two sees the other
        if (_creditedOnLane.IsEmpty)
        {
            Volatile.Read(ref _creditedOnLaneAnswered)?.TrySetResult();
        }
    }

    /// <summary>
    /// A credited value sent on the lane, kept until the home answers it: its encoded
    /// <paramref name="Bytes"/>, or the <c>byte[]</c> value's own <paramref name="Array"/>.
    /// </summary>
    private readonly record struct CreditedOnLane(uint Handle, PooledValueBuffer? Bytes, byte[]? Array, string Traceparent);

    /// <summary>
    /// Sends the bytes of plain write <paramref name="opId"/> on the bulk lane when they are large
    /// enough and the lane is up; false leaves them to the link. The bytes must stay untouched
    /// until the home answers the operation. Queued: <see cref="SendQueuedOnLane"/> sends them.
    /// </summary>
    internal bool TrySendOnLane(ulong opId, ReadOnlyMemory<byte> bytes, bool bytesValue = false) =>
        bytes.Length >= _node.Options.BulkLaneThreshold && _lane is { IsUsable: true } lane && lane.TrySend(opId, bytes, bytesValue);

    /// <summary>Whether a <c>byte[]</c> value of <paramref name="length"/> bytes would go on the bulk lane now (its encoding adds the presence byte).</summary>
    internal bool TakesBytesValueOnLane(int length) =>
        length + 1L >= _node.Options.BulkLaneThreshold && _lane is { IsUsable: true };

    /// <summary>
    /// Queues a <c>byte[]</c> value on the bulk lane from its own array (no encode copy); false if
    /// the lane cannot take it. The array must stay untouched until the home has answered.
    /// Queued: <see cref="SendQueuedOnLane"/> sends it.
    /// </summary>
    internal bool TrySendBytesValueOnLane(ulong opId, byte[] value)
    {
        if (!TakesBytesValueOnLane(value.Length) || _lane is not { } lane || !lane.TrySendBytesValue(opId, value))
        {
            return false;
        }

        Interlocked.Increment(ref _arrayLaneWrites);
        return true;
    }

    /// <summary>
    /// Sends what the calling writer queued on the bulk lane (on its own thread when the lane is
    /// idle): called after the value's Write frame was queued, outside the end's credit gate.
    /// </summary>
    internal void SendQueuedOnLane() => _lane?.SendQueued();

    /// <summary>How many values this link has sent on its bulk lane from their own arrays; for tests.</summary>
    internal long ArrayLaneWrites => Interlocked.Read(ref _arrayLaneWrites);

    /// <summary>How many values writers' own threads sent whole on the bulk lane; for tests.</summary>
    internal long LaneInlineSends => _lane?.InlineSends ?? 0;

    /// <summary>Tests only: called in the middle of each value the lane sends (true: by the writer's own thread), see <see cref="BulkLane.PartSentForTests"/>.</summary>
    internal Action<bool>? LanePartSentForTests
    {
        set => _lane!.PartSentForTests = value;
    }

    /// <summary>Breaks the bulk lane, as a failed connection would; for tests of the fallback.</summary>
    internal void BreakLane() => _lane?.Break();

    /// <summary>How many credited values this link has sent on its bulk lane; for tests.</summary>
    internal long CreditedLaneWrites => Interlocked.Read(ref _creditedLaneWrites);

    /// <summary>Whether large plain writes go on a bulk lane now.</summary>
    internal bool HasLane => _lane is { IsUsable: true };

    /// <summary>How this link's bulk lane travels, if it has one; for tests.</summary>
    internal LaneKind? LaneKind => _lane?.Kind;

    internal void Poison(uint handle)
    {
        ThrowIfFailed();
        Send(new ClientFrame { Poison = new Poison { Handle = handle } });
    }

    /// <summary>
    /// Registers a new operation; the caller then sends its frames and awaits it with <see cref="AwaitAsync"/>.
    /// A caller that <paramref name="reads"/> the answer's value releases it (<see cref="Completion.ReleaseValue"/>).
    /// </summary>
    internal PendingOp Begin(bool reserves = false, bool reads = false)
    {
        ulong id = (ulong)Interlocked.Increment(ref _nextOp);
        var op = new PendingOp(id, _node.Options.MaxValueSize, reserves, reads);
        _ops[id] = op;
        if (_failure is { } failure)
        {
            // Registered after the loss swept the table: complete it here so it cannot wait forever.
            _ops.TryRemove(id, out _);
            op.Fail(failure, unsent: true);
        }

        return op;
    }

    /// <summary>Sends a value's chunks, then the closing frame <paramref name="close"/> builds around the last part.</summary>
    internal void SendValue(ulong opId, ReadOnlyMemory<byte> value, Func<ByteString, ClientFrame> close)
    {
        ByteString last = ValueEncoder.Split(value, _node.Options.ChunkSize, (this, opId), static (s, part) => s.Item1.Send(new ClientFrame { Chunk = new Chunk { OpId = s.opId, Data = part } }));
        Send(close(last));
    }

    internal void Send(ClientFrame frame) => _out.Writer.TryWrite(frame);

    /// <summary>Asks the home to cancel an operation; its answer still comes (see <see cref="AwaitAsync"/>).</summary>
    internal void Cancel(ulong opId) => Send(new ClientFrame { Cancel = new Cancel { OpId = opId } });

    /// <summary>Answers a reservation: take the value set aside (true) or give it back (false). Does not wait.</summary>
    internal void Settle(ulong opId, bool accept) => Send(new ClientFrame { Settle = new Settle { OpId = opId, Accept = accept } });

    /// <summary>
    /// Waits for the operation's answer. Cancelling asks the home to cancel, but still waits for
    /// its answer: only the home knows whether the operation happened first, and a value it
    /// delivered must not be dropped.
    /// </summary>
    internal async ValueTask<Completion> AwaitAsync(PendingOp op, CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled)
        {
            return await op.Task.ConfigureAwait(false);
        }

        using CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(
            static (state, _) =>
            {
                var (link, id) = ((PeerLink, ulong))state!;
                link.Send(new ClientFrame { Cancel = new Cancel { OpId = id } });
            },
            (this, op.Id));
        return await op.Task.ConfigureAwait(false);
    }

    internal void ThrowIfFailed()
    {
        if (_failure is { } failure)
        {
            throw failure;
        }
    }

    private async Task PumpAsync()
    {
        try
        {
            ChannelReader<ClientFrame> frames = _out.Reader;
            while (await frames.WaitToReadAsync(_stop.Token).ConfigureAwait(false))
            {
                while (frames.TryRead(out ClientFrame? frame))
                {
                    if (_homeTakesBatches)
                    {
                        frame = FrameBatching.Gather(frame, frames);
                    }

                    // Frames already queued behind this one go out in the same flush.
                    _call.RequestStream.WriteOptions = NodeTransport.FlushUnless(frames.TryPeek(out _));
                    await _call.RequestStream.WriteAsync(frame, _stop.Token).ConfigureAwait(false);

                    // gRPC has copied the credited values now: their buffers go back, in the order queued.
                    for (int sent = FrameBatching.CreditedWrites(frame); sent > 0 && _creditedBuffers.TryDequeue(out PooledValueBuffer? buffer); sent--)
                    {
                        buffer.Return();
                    }
                }
            }

            await _call.RequestStream.CompleteAsync().ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Any failure to write means the link is gone; Fail tells every operation.
        catch (Exception e)
#pragma warning restore CA1031
        {
            Fail(e);
        }
    }

    private async Task ReadLoopAsync()
    {
        Exception? cause = null;
        try
        {
            while (await _call.ResponseStream.MoveNext(CancellationToken.None).ConfigureAwait(false))
            {
                Dispatch(_call.ResponseStream.Current);
            }
        }
#pragma warning disable CA1031 // Any failure to read means the link is gone; Fail tells every operation.
        catch (Exception e)
#pragma warning restore CA1031
        {
            cause = e;
        }

        Fail(cause);
    }

    private void Dispatch(HomeFrame frame)
    {
        try
        {
            DispatchBody(frame);
        }
        finally
        {
            // A pooled array no operation took (its op is gone, or the frame carried none it expected).
            frame.TakeRented()?.Return();
        }
    }

    private void DispatchBody(HomeFrame frame)
    {
        switch (frame.BodyCase)
        {
            case HomeFrame.BodyOneofCase.Hello:
                _homeTakesBatches = frame.Hello.FrameBatches;
                _hello.TrySetResult(frame.Hello);
                break;
            case HomeFrame.BodyOneofCase.Attached:
                if (_attaching.TryGetValue(frame.Attached.Handle, out TaskCompletionSource<Attached>? attaching))
                {
                    attaching.TrySetResult(frame.Attached);
                }

                break;
            case HomeFrame.BodyOneofCase.Chunk:
                if (_ops.TryGetValue(frame.Chunk.OpId, out PendingOp? chunked) && !chunked.AddChunk(frame.Chunk.Data, frame.TakeRented()))
                {
                    _ops.TryRemove(frame.Chunk.OpId, out _);
                    chunked.Fail(new InvalidOperationException($"The value from {Target} is larger than the {_node.Options.MaxValueSize:N0} bytes this program accepts (CspNodeOptions.MaxValueSize)."));
                }

                break;
            case HomeFrame.BodyOneofCase.Ready:
                if (_ops.TryGetValue(frame.Ready.OpId, out PendingOp? watch))
                {
                    watch.OnReady?.Invoke();
                }

                break;
            case HomeFrame.BodyOneofCase.Reserved:
                if (_ops.TryGetValue(frame.Reserved.OpId, out PendingOp? reservation))
                {
                    reservation.SetReserved(frame.Reserved.Data, frame.TakeRented());
                }

                break;
            case HomeFrame.BodyOneofCase.Credit:
                if (_credits.TryGetValue(frame.Credit.Handle, out WriteCredits? credits))
                {
                    if (frame.Credit.Poisoned)
                    {
                        credits.Poison(frame.Credit.Message);
                    }

                    credits.Grant((int)frame.Credit.Count);
                }

                break;
            case HomeFrame.BodyOneofCase.StopCredits:
                StopCredits(frame.StopCredits.Handle);
                break;
            case HomeFrame.BodyOneofCase.HandoverValue:
                if (HandoverValuesHeld().Add(frame.HandoverValue) is { } progress)
                {
                    Send(new ClientFrame { HandoverProgress = progress });
                }

                break;
            case HomeFrame.BodyOneofCase.HomeLeft:
                if (_homesLeft.Count < MaxHomesLeft)
                {
                    _homesLeft[frame.HomeLeft.Name] = frame.HomeLeft.Poison;
                }

                if (_takesUnconfirmed.TryRemove(frame.HomeLeft.Name, out TaskCompletionSource<bool>? taken))
                {
                    // Moved (empty poison): the name is this program's. Poisoned: the old home gave
                    // up on the move after this program took it.
                    taken.TrySetResult(frame.HomeLeft.Poison.Length == 0);
                }

                break;
            case HomeFrame.BodyOneofCase.Handover:
                // Everything came: the leaving home's bound now covers taking the home here.
                Send(new ClientFrame { HandoverProgress = new HandoverProgress { Name = frame.Handover.Name, Values = frame.Handover.ValueCount } });
                IReadOnlyList<byte[]>? values = null;
                Exception? refused = null;
                try
                {
                    values = HandoverValuesHeld().Take(frame.Handover);
                }
                catch (Exception e) when (e is InvalidOperationException or System.IO.InvalidDataException)
                {
                    refused = e;
                }

                _ = TakeHomeAsync(frame.Handover, values, refused);
                break;
            case HomeFrame.BodyOneofCase.Completed:
                if (_ops.TryRemove(frame.Completed.OpId, out PendingOp? op))
                {
                    op.Complete(frame.Completed, frame.TakeRented());
                }
                else
                {
                    AnswerCreditedOnLane(frame.Completed.OpId, frame.Completed);
                }

                break;
            case HomeFrame.BodyOneofCase.LanePlaced:
                foreach (ulong placed in frame.LanePlaced.OpIds)
                {
                    AnswerCreditedOnLane(placed, completed: null);
                }

                break;
        }
    }

    /// <summary>
    /// The home is leaving and offers this program one of its channels (link.proto, Handover):
    /// installed here as this program's own home, then answered, so that the old home moves the name.
    /// </summary>
    private async Task TakeHomeAsync(Handover handover, IReadOnlyList<byte[]>? values, Exception? refused)
    {
        var answer = new HomeTaken { Name = handover.Name };
        try
        {
            if (HandoverValues.DelayedTakeForTests.TryGetValue(handover.Name, out Func<Task>? delayed))
            {
                await delayed().ConfigureAwait(false);
            }

            if (refused is not null)
            {
                throw refused;
            }

            if (!string.IsNullOrEmpty(HomeLeft(handover.Name)))
            {
                // Too late: the leaving home gave up on this offer and poisoned the channel.
                throw new InvalidOperationException($"The home of '{handover.Name}' gave up on this offer before it was taken.");
            }

            if (_node.TakeHome is not { } take)
            {
                throw new InvalidOperationException($"{_node.ProgramLabel} takes no channel homes (it has no NameServer).");
            }

            answer.Incarnation = await take(handover, values!).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Not swallowed: the leaving home is told why, and offers the channel elsewhere or poisons it.
        catch (Exception e)
#pragma warning restore CA1031
        {
            answer.Status = (int)StatusCode.FailedPrecondition;
            answer.Message = e.Message;
        }

        if (answer.Status != 0)
        {
            Send(new ClientFrame { Taken = answer });
            return;
        }

        // Installed here: the old home now moves the name, and says so (HomeLeft, or the BecomeHome
        // answer). If it cannot any more (its link fails first), the channel is settled by asking
        // the NameServer, so that this program does not keep a copy the name does not lead to.
        var confirmation = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        _takesUnconfirmed[handover.Name] = confirmation;
        Send(new ClientFrame { Taken = answer });
        if (_failure is not null && _takesUnconfirmed.TryRemove(handover.Name, out _))
        {
            confirmation.TrySetResult(false);
        }

        if (!await confirmation.Task.ConfigureAwait(false) && _node.SettleTake is { } settle)
        {
            await settle(handover.Name).ConfigureAwait(false);
        }

        if (TakeSettledForTests.TryGetValue(handover.Name, out Action? settled))
        {
            settled();
        }
    }

    /// <summary>The buffered values of offered homes held so far (link.proto, HandoverValue); the link's reading loop only.</summary>
    private HandoverValues HandoverValuesHeld() =>
        _handoverValues ??= new HandoverValues(_node.Options.MaxValueSize, Math.Max(_node.Options.MaxBytesPerLink, _node.Options.MaxValueSize));

    /// <summary>
    /// The home is moving and asks the end <paramref name="handle"/> to spend no more credits
    /// (link.proto, StopCredits): the answer is queued behind every credited Write of the end (an
    /// end this program no longer writes on is answered at once).
    /// </summary>
    private void StopCredits(uint handle)
    {
        var answer = new ClientFrame { CreditsStopped = new CreditsStopped { Handle = handle } };
        if (_credits.TryGetValue(handle, out WriteCredits? credits))
        {
            credits.Stop(() => Send(answer));
        }
        else
        {
            Send(answer);
        }
    }

    private void Fail(Exception? cause)
    {
        Exception failure = _stop.IsCancellationRequested
            ? new ObjectDisposedException(nameof(CspNode), "This program has left the distributed system (CspManager.Shutdown or CspNode.DisposeAsync).")
            : new PeerLostException(
                $"Lost {PeerLabel}: it " + (cause is null ? "closed the link" : $"exited, was killed, or did not answer within CspNodeOptions.PeerTimeout ({_node.Options.PeerTimeout.TotalSeconds:0.#} s)") +
                ". Every operation on the channels, barriers and buckets it hosts fails from now on: end this process as on poison, or get the name again once that program runs again. (What the transport saw is the InnerException.)",
                cause ?? new InvalidOperationException("The link was closed."));
        if (Interlocked.CompareExchange(ref _failure, failure, null) is not null)
        {
            return;
        }

        if (!_stop.IsCancellationRequested)
        {
            Log.LinkLost(_node.Logger, Target, cause?.Message ?? "closed");
        }

        _hello.TrySetException(failure);
        foreach (var attaching in _attaching.Values)
        {
            attaching.TrySetException(failure);
        }

        foreach (ulong id in _ops.Keys)
        {
            if (_ops.TryRemove(id, out PendingOp? op))
            {
                op.Fail(failure);
            }
        }

        foreach (ulong id in _creditedOnLane.Keys)
        {
            ForgetCreditedOnLane(id);
        }

        foreach (string name in _takesUnconfirmed.Keys)
        {
            if (_takesUnconfirmed.TryRemove(name, out TaskCompletionSource<bool>? take))
            {
                take.TrySetResult(false);
            }
        }

        _out.Writer.TryComplete();
    }

    private string PeerLabel => PeerProgram.Length > 0 ? $"the program '{PeerProgram}' at {Target}" : $"the program at {Target}";

    public async ValueTask DisposeAsync()
    {
        try
        {
            // Credited values on the lane were written as far as their writers know: the home
            // confirms each before this side of the link closes (one sent again on the link after
            // an ABORTED goes out before the pump ends).
            var answered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Interlocked.Exchange(ref _creditedOnLaneAnswered, answered);
            if (_creditedOnLane.IsEmpty)
            {
                answered.TrySetResult();
            }

            await answered.Task.WaitAsync(_node.Options.PeerTimeout).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Best effort on the way out: a value the home never got poisons its channel there.
        catch (Exception)
#pragma warning restore CA1031
        {
        }

        _out.Writer.TryComplete();
        try
        {
            // Closing our side lets the home release our ends as departed, not lost.
            await _writer.WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);

            // The home reads the end of our side, releases our ends and then ends its answers.
            // Disposing the call before that would reset the stream under the home's read, and
            // the home would count this program as lost and poison its channels.
            await _reader.WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Best effort on the way out.
        catch (Exception)
#pragma warning restore CA1031
        {
        }

        await _stop.CancelAsync().ConfigureAwait(false);
        Fail(null);
        _call.Dispose();
        try
        {
            // The call is disposed and the token cancelled, so the reader ends at once; bounded
            // all the same, so that leaving never hangs on a link.
            await _reader.WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Already reported through Fail.
        catch (Exception)
#pragma warning restore CA1031
        {
        }

        if (_lane is { } lane)
        {
            await lane.DisposeAsync().ConfigureAwait(false);
        }

        _channel.Dispose();
        _stop.Dispose();
    }

    private static partial class Log
    {
        [LoggerMessage(10, LogLevel.Warning, "Link to {Target} lost: {Reason}")]
        internal static partial void LinkLost(ILogger logger, string target, string reason);
    }
}
