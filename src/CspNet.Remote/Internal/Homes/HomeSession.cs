using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Diagnostics;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;
using Google.Protobuf;
using Grpc.Core;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// The home side of one Link stream: the ends one client program attached to constructs hosted
/// here, and the operations it runs on them.
/// </summary>
/// <remarks>
/// Frames are read by one loop (<see cref="RunAsync"/>); each operation then runs as its own task
/// on the core construct, so a blocked write never holds up the stream. Replies go through one
/// <see cref="InlineStreamWriter{T}"/>, because a gRPC stream takes one write at a time: a reply
/// sent while the stream is idle is written at once by the thread that completed the operation,
/// with no hop through the ThreadPool; others queue behind the write in progress. Every operation
/// is answered exactly once with Completed, and a Cancel that arrives after the operation ended
/// finds nothing to cancel: the Completed already sent is the truth.
/// </remarks>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "The session disposes its cancellation source when its stream ends (RunAsync).")]
internal sealed partial class HomeSession
{
    /// <summary>
    /// How many values a stream may have in assembly at once (chunks received, closing Write not
    /// yet). A client sends a value's chunks and its Write back to back, so only as many values as
    /// it writes concurrently are ever open; a stream that opens more is abandoning them, and each
    /// could hold up to MaxValueSize bytes here until the stream ends.
    /// </summary>
    internal const int MaxValuesInAssembly = 1024;

    /// <summary>
    /// How many replies may wait for the stream before this session stops reading the client's
    /// frames (until half have left). Replies are queued without waiting, so a client that sends
    /// operations but does not read their answers would otherwise fill this program's memory;
    /// instead its requests wait in HTTP/2's flow control, at its end.
    /// </summary>
    internal const int MaxQueuedReplies = 1024;

    private readonly IHomeNode _node;
    private readonly Dictionary<uint, HomeEnd> _ends = [];
    private readonly Dictionary<ulong, ValueAssembler> _chunks = [];
    private readonly HashSet<ulong> _oversized = [];
    private readonly ConcurrentDictionary<ulong, RunningOp> _running = new();
    private InlineStreamWriter<HomeFrame>? _out; // set when the stream starts, before any frame is read
    private string _peer = "a program that has not introduced itself";
    private bool _grantsCredits; // the client said Hello.write_credits, and this program grants them
    private LaneInbox? _lane; // the client said Hello.bulk_lane, and this program offered one
    private LanePlacements? _placements; // the client said Hello.lane_placed too: placed credited lane values answered in batches
    private byte[]? _laneSecret;

    // Per writing end, the work later frames on it wait for: credited values still coming on the
    // lane (and what queued behind them). A value on the lane and a later one on the link must
    // reach the channel in the order the writer sent their Write frames. Read loop only.
    private readonly Dictionary<uint, Task> _inOrder = [];

    // Credited lane values the lane failed to bring, by op_id: the client sends each again on the link.
    private readonly ConcurrentDictionary<ulong, TaskCompletionSource<LanePayload>> _resent = new();
    private readonly ConcurrentDictionary<string, HandoverOffer> _handovers = new(StringComparer.Ordinal); // homes offered to this client, by name
    private readonly ConcurrentDictionary<uint, TaskCompletionSource> _creditStops = new(); // StopCredits sent, by handle, until CreditsStopped is handled
    private readonly CancellationTokenSource _closing = new();
    private readonly CancellationToken _closed; // _closing's token, usable after the source is disposed

    internal HomeSession(IHomeNode node)
    {
        _node = node;
        _closed = _closing.Token;
    }


    internal async Task RunAsync(IAsyncStreamReader<ClientFrame> input, IServerStreamWriter<HomeFrame> output, CancellationToken cancellationToken)
    {
        _out = new InlineStreamWriter<HomeFrame>(output, cancellationToken, written: static frame => frame.Sent?.Return(), MaxQueuedReplies);
        bool lost = true;
        try
        {
            if (!await NextAsync(input, cancellationToken).ConfigureAwait(false))
            {
                lost = false;
                return;
            }

            input.Current.TakeRented()?.Return(); // a Hello has no data: only a misbehaving client's first frame does
            if (input.Current.BodyCase != ClientFrame.BodyOneofCase.Hello || input.Current.Hello.ProtocolVersion != 1)
            {
                throw new RpcException(new Status(StatusCode.InvalidArgument, "A Link stream starts with Hello (protocol_version 1)."));
            }

            Hello hello = input.Current.Hello;
            _peer = $"'{hello.Program}' (incarnation {hello.Incarnation})";
            _grantsCredits = hello.WriteCredits && _node.Options.PipelineBufferedWrites;
            var answer = new Hello { ProtocolVersion = 1, Incarnation = _node.Incarnation, Program = _node.ProgramLabel, WriteCredits = _grantsCredits, FrameBatches = true };
            if (hello.BulkLane && _node.Lanes is { } lanes)
            {
                _lane = new LaneInbox(MaxLaneBytesPending(_node.Options)) { TakesBytesValues = hello.LaneBytes };
                _laneSecret = lanes.Open(_lane);
                answer.LaneBytes = hello.LaneBytes;
                answer.LanePath = lanes.SocketPath;
                answer.LaneHost = lanes.HostIdentity;
                answer.LanePort = (uint)lanes.TcpPort;
                answer.LaneSecret = ByteString.CopyFrom(_laneSecret);
                if (hello.LanePlaced)
                {
                    _placements = new LanePlacements(placed => Send(new HomeFrame { LanePlaced = placed }));
                    answer.LanePlaced = true;
                }
            }

            Send(new HomeFrame { Hello = answer });
            Log.LinkOpened(_node.Logger, _peer);

            while (await NextAsync(input, cancellationToken).ConfigureAwait(false))
            {
                Dispatch(input.Current);
                if (_out.WhenRoom() is { } room)
                {
                    // The client is not reading its answers as fast as its requests produce them.
                    Log.RepliesBacklogged(_node.Logger, _peer, MaxQueuedReplies);
                    await room.WaitAsync(cancellationToken).ConfigureAwait(false);
                }
            }

            lost = false; // the client closed its side: it left on purpose
        }
        catch (RpcException e) when (e.StatusCode is StatusCode.InvalidArgument or StatusCode.ResourceExhausted)
        {
            Log.StreamRefused(_node.Logger, _peer, e.Status.Detail);
            throw;
        }
        finally
        {
            Close(lost);

            // The replies already sent go out (a failed write ends the stream: nothing to report).
            await _out.CompleteAsync().ConfigureAwait(false);
            _closing.Dispose();
        }
    }

    /// <summary>The next frame; bytes that are not a ClientFrame break the stream's framing.</summary>
    private static async Task<bool> NextAsync(IAsyncStreamReader<ClientFrame> input, CancellationToken cancellationToken)
    {
        try
        {
            return await input.MoveNext(cancellationToken).ConfigureAwait(false);
        }
        catch (InvalidProtocolBufferException e)
        {
            // Left to gRPC, a parse failure inside the handler is answered UNKNOWN ("Exception was
            // thrown by handler"), which tells the client nothing and looks like a crash here.
            throw new RpcException(new Status(StatusCode.InvalidArgument, "A frame is not a valid ClientFrame: " + e.Message));
        }
    }

    private void Dispatch(ClientFrame frame)
    {
        try
        {
            DispatchBody(frame);
        }
        finally
        {
            // The frame's pooled array, unless a value in assembly took it. A Write's value has been
            // decoded by now (HomeEnd.WriteAsync decodes before it returns), or refused.
            frame.TakeRented()?.Return();
        }
    }

    private void DispatchBody(ClientFrame frame)
    {
        switch (frame.BodyCase)
        {
            case ClientFrame.BodyOneofCase.Attach:
                Attach(frame.Attach);
                break;
            case ClientFrame.BodyOneofCase.Detach:
                Detach(frame.Detach);
                break;
            case ClientFrame.BodyOneofCase.Chunk:
                AddChunk(frame);
                break;
            case ClientFrame.BodyOneofCase.Write:
                Write(frame.Write);
                break;
            case ClientFrame.BodyOneofCase.Read:
                Start(frame.Read.OpId, frame.Read.Handle, static (end, ct, _) => end.ReadAsync(ct), 0);
                break;
            case ClientFrame.BodyOneofCase.Sync:
                Start(frame.Sync.OpId, frame.Sync.Handle, static (end, ct, kind) => end.SyncAsync(kind, ct), frame.Sync.Kind);
                break;
            case ClientFrame.BodyOneofCase.Cancel:
                if (_running.TryGetValue(frame.Cancel.OpId, out RunningOp running))
                {
                    running.Cancellation.Cancel();
                }

                break;
            case ClientFrame.BodyOneofCase.Poison:
                Poison(frame.Poison);
                break;
            case ClientFrame.BodyOneofCase.Watch:
                Start(frame.Watch.OpId, frame.Watch.Handle, static (end, ct, s) => end.WatchAsync(() => s.session.Send(new HomeFrame { Ready = new Ready { OpId = s.opId } }), ct), (session: this, opId: frame.Watch.OpId));
                break;
            case ClientFrame.BodyOneofCase.Reserve:
                StartReserve(frame.Reserve);
                break;
            case ClientFrame.BodyOneofCase.Settle:
                if (_running.TryGetValue(frame.Settle.OpId, out RunningOp reservation))
                {
                    // Settles a reservation (a second Settle changes nothing); for another running
                    // operation it is ignored: that operation's own Completed is still owed.
                    // A writing end's reservation is accepted only by Deliver, which brings the value.
                    reservation.Settled?.TrySetResult(frame.Settle.Accept);
                    reservation.Offer?.Decline();
                }
                else
                {
                    // Only a reservation that has sent Reserved is settled; link.proto ends only the
                    // offending operation for anything else, not the stream.
                    Complete(frame.Settle.OpId, new OpResult(Outcome.Error, StatusCode.FailedPrecondition, $"Operation {frame.Settle.OpId} holds no reservation to settle."));
                }

                break;
            case ClientFrame.BodyOneofCase.Batch:
                DispatchBatch(frame.Batch);
                break;
            case ClientFrame.BodyOneofCase.Deliver:
                Deliver(frame.Deliver);
                break;
            case ClientFrame.BodyOneofCase.CreditsStopped:
                CreditsStopped(frame.CreditsStopped.Handle);
                break;
            case ClientFrame.BodyOneofCase.BecomeHome:
                BecomeHome(frame.BecomeHome);
                break;
            case ClientFrame.BodyOneofCase.Taken:
                if (_handovers.TryRemove(frame.Taken.Name, out HandoverOffer? offered))
                {
                    if (frame.Taken.Status != (int)StatusCode.OK)
                    {
                        Log.HomeRefused(_node.Logger, frame.Taken.Name, _peer, frame.Taken.Message);
                    }

                    offered.Answer(frame.Taken.Status == (int)StatusCode.OK && frame.Taken.Incarnation.Length > 0 ? frame.Taken.Incarnation : null);
                }

                break;
            case ClientFrame.BodyOneofCase.HandoverProgress:
                if (_handovers.TryGetValue(frame.HandoverProgress.Name, out HandoverOffer? progressing))
                {
                    progressing.Progressed();
                }

                break;
            default:
                throw new RpcException(new Status(StatusCode.InvalidArgument, $"Unexpected frame {frame.BodyCase} on a Link stream."));
        }
    }

    /// <summary>
    /// Poisons the construct of an end, after the credited values queued on it. A poison with an
    /// op_id is answered; on a home that is moving it is not applied here, where it would stay
    /// behind, but answered MOVED once the home has moved, and the client sends it there. It counts
    /// as an operation on the home, so that a move describes the channel only after it.
    /// </summary>
    private void Poison(Poison poison)
    {
        ulong opId = poison.OpId;
        if (opId != 0)
        {
            RequireNew(opId);
        }

        if (!_ends.TryGetValue(poison.Handle, out HomeEnd? end))
        {
            if (opId != 0)
            {
                Complete(opId, new OpResult(Outcome.Error, StatusCode.NotFound, $"Handle {poison.Handle} is not attached on this stream."));
            }

            return;
        }

        Home? home = end.Home;
        home?.OperationStarted();
        if (opId != 0 && home?.Move is { } moving)
        {
            home.OperationEnded();
            _ = AnswerAfterMoveAsync(opId, moving);
            return;
        }

        InOrder(poison.Handle, end, e =>
        {
            e.Poison();
            home?.OperationEnded();
            if (opId != 0)
            {
                Complete(opId, OpResult.Ok);
            }
        });
    }

    /// <summary>The frames of a batch, in order, each as if it had come alone.</summary>
    private void DispatchBatch(FrameBatch batch)
    {
        foreach (ClientFrame frame in batch.Frames)
        {
            if (frame.BodyCase is ClientFrame.BodyOneofCase.Batch or ClientFrame.BodyOneofCase.Hello)
            {
                throw new RpcException(new Status(StatusCode.InvalidArgument, $"A FrameBatch holds a {frame.BodyCase}; batches hold only operation frames."));
            }

            Dispatch(frame);
        }
    }

    private void Attach(Attach attach)
    {
        var reply = new Attached { Handle = attach.Handle };
        try
        {
            if (_ends.ContainsKey(attach.Handle))
            {
                throw new RpcException(new Status(StatusCode.InvalidArgument, $"Handle {attach.Handle} is already attached on this stream."));
            }

            if (!_node.Homes.TryGetValue(attach.Name, out Home? home))
            {
                throw new RpcException(new Status(StatusCode.NotFound, $"No construct named '{attach.Name}' lives in {_node.ProgramLabel}: it may have belonged to an earlier run of this program. Resolve the name again."));
            }

            HomeEnd end = home.Attach(attach.Role, attach.Kind, attach.ValueType, _peer, _node.Options.MaxEndsPerName, this);
            end.Handle = attach.Handle;
            if (_grantsCredits)
            {
                uint handle = attach.Handle;
                end.OfferCredits((count, poisoned) => Send(new HomeFrame { Credit = new Credit { Handle = handle, Count = (uint)count, Poisoned = poisoned is not null, Message = poisoned ?? string.Empty } }));
            }

            _ends.Add(attach.Handle, end);
            reply.Status = (int)StatusCode.OK;
        }
        catch (RpcException e)
        {
            reply.Status = (int)e.StatusCode;
            reply.Message = e.Status.Detail;
        }
        catch (InvalidOperationException e)
        {
            reply.Status = (int)StatusCode.FailedPrecondition;
            reply.Message = e.Message;
        }

        Send(new HomeFrame { Attached = reply });
    }

    private void AddChunk(ClientFrame frame)
    {
        Chunk chunk = frame.Chunk;
        if (_oversized.Contains(chunk.OpId))
        {
            return;
        }

        if (!_chunks.TryGetValue(chunk.OpId, out ValueAssembler? assembler))
        {
            if (_chunks.Count + _oversized.Count >= MaxValuesInAssembly)
            {
                // Chunks of values whose Write never comes would otherwise stay here until the stream
                // ends: bounded per value by MaxValueSize, but not in number.
                throw new RpcException(new Status(StatusCode.ResourceExhausted, $"More than {MaxValuesInAssembly} values are in assembly on this stream: each value's chunks must be followed by its Write."));
            }

            _chunks.Add(chunk.OpId, assembler = new ValueAssembler(_node.Options.MaxValueSize));
        }

        long before = assembler.Length;
        if (!assembler.TryAdd(chunk.Data, frame.TakeRented()))
        {
            // Dropped at once so a flood of chunks cannot fill this program's memory; the Write that
            // closes the value is answered with RESOURCE_EXHAUSTED.
            _chunks.Remove(chunk.OpId);
            assembler.Release();
            _oversized.Add(chunk.OpId);
            _assemblyBytes -= before;
            return;
        }

        AddAssemblyBytes(assembler.Length - before);
    }

    /// <summary>
    /// The most bytes a stream's lane may hold for Writes that have not come: a client sends a
    /// payload just before its Write, so only the values it writes at once are ever pending.
    /// </summary>
    internal static long MaxLaneBytesPending(CspNodeOptions options) => Math.Max(options.MaxValueSize, 64L << 20);

    private void Write(Write write)
    {
        RequireNew(write.OpId);
        if (write.Lane)
        {
            WriteFromLane(write);
            return;
        }

        _chunks.Remove(write.OpId, out ValueAssembler? chunks);
        _assemblyBytes -= chunks?.Length ?? 0;
        Activity? activity = RemoteTracing.StartReceive(write.Traceparent);
        try
        {
            bool tooLarge = _oversized.Remove(write.OpId) || (chunks?.Length ?? 0) + write.Data.Length > _node.Options.MaxValueSize;
            if (write.Credited && _resent.TryRemove(write.OpId, out TaskCompletionSource<LanePayload>? resent))
            {
                // A credited lane value sent again: it takes the place in order its lane Write had.
                resent.TrySetResult(tooLarge ? default : Copy(ValueAssembler.Complete(chunks, write.Data)));
                return;
            }

            bool queued = IsQueued(write.Handle);
            if (write.Credited)
            {
                // No answer is owed: the end places the value in the slot reserved for it (or poisons
                // the channel if it cannot). PutCredited decodes before it returns, like WriteAsync.
                if (!_ends.TryGetValue(write.Handle, out HomeEnd? end) || (!queued && !end.PutCredited(tooLarge ? default : ValueAssembler.Complete(chunks, write.Data), tooLarge)))
                {
                    throw new RpcException(new Status(StatusCode.InvalidArgument, $"A credited Write on handle {write.Handle}, which is not a writing end granted credits on this stream."));
                }

                if (queued)
                {
                    // Behind values still on the lane: placed after them, from a copy (the frame's array goes back now).
                    LanePayload copy = tooLarge ? default : Copy(ValueAssembler.Complete(chunks, write.Data));
                    string? lost = tooLarge ? "it is larger than the largest value this program accepts (CspNodeOptions.MaxValueSize)" : null;
                    InOrder(write.Handle, end, e => PlaceCredited(e, copy, lost));
                }

                return;
            }

            if (tooLarge)
            {
                Complete(write.OpId, new OpResult(Outcome.Error, StatusCode.ResourceExhausted, $"The value is larger than the {_node.Options.MaxValueSize:N0} bytes {_node.ProgramLabel} accepts (CspNodeOptions.MaxValueSize)."));
                return;
            }

            var value = ValueAssembler.Complete(chunks, write.Data);
            if (queued)
            {
                LanePayload copy = Copy(value);
                Start(write.OpId, write.Handle, static (end, ct, s) => s.session.WriteInOrder(end, s.handle, Task.FromResult(new HeldPayload(s.copy, 0)), 0, ct), (session: this, handle: write.Handle, copy), activity: activity, heldBytes: value.Length);
            }
            else
            {
                Start(write.OpId, write.Handle, static (end, ct, v) => end.WriteAsync(v, ct), value, activity: activity, heldBytes: value.Length);
            }

            activity = null; // ended with the operation
        }
        finally
        {
            activity?.Stop();
            // The value was decoded before WriteAsync returned: its pooled parts go back now, not
            // when a reader takes it, so a blocked write holds the decoded value only.
            chunks?.Release();
        }
    }

    /// <summary>
    /// The value of a writing end's offer that its selection chose: placed where the reservation
    /// set it aside, before any later frame of the stream is handled (after credited values of the
    /// end still coming on the lane), so the writer's values keep their order.
    /// </summary>
    private void Deliver(Deliver deliver)
    {
        _chunks.Remove(deliver.OpId, out ValueAssembler? chunks);
        _assemblyBytes -= chunks?.Length ?? 0;
        try
        {
            bool tooLarge = _oversized.Remove(deliver.OpId) || (chunks?.Length ?? 0) + deliver.Data.Length > _node.Options.MaxValueSize;
            if (!_running.TryGetValue(deliver.OpId, out RunningOp running))
            {
                Complete(deliver.OpId, new OpResult(Outcome.Error, StatusCode.FailedPrecondition, $"Operation {deliver.OpId} holds no writing end's reservation to deliver to."));
                return;
            }

            if (running.Offer is not { } offer)
            {
                return; // another running operation: its own Completed is still owed
            }

            ReadOnlySequence<byte> value = tooLarge ? default : ValueAssembler.Complete(chunks, deliver.Data);
            if (IsQueued(running.Handle) && _ends.TryGetValue(running.Handle, out HomeEnd? end))
            {
                // Behind credited values still on the lane: placed after them, from a copy.
                LanePayload copy = tooLarge ? default : Copy(value);
                InOrder(running.Handle, end, _ =>
                {
                    try
                    {
                        offer.Deliver(copy.Array is null ? default : new ReadOnlySequence<byte>(copy.Array, 0, copy.Length), tooLarge);
                    }
                    finally
                    {
                        copy.Return();
                    }
                });
                return;
            }

            // Decoded before Deliver returns: the pooled parts go back below.
            offer.Deliver(value, tooLarge);
        }
        finally
        {
            chunks?.Release();
        }
    }

    /// <summary>
    /// A Write whose value comes on the bulk lane. A plain one waits for the value, then writes as
    /// any other. A credited one is placed in the order its Write frame came, then answered OK (or
    /// ABORTED if the lane did not bring it: the client sends it again on the link).
    /// </summary>
    private void WriteFromLane(Write write)
    {
        if (_lane is null || write.Data.Length != 0 || _chunks.ContainsKey(write.OpId))
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"A lane Write (op {write.OpId}) that carries data, or comes on a stream with no lane: only a stream whose Hello opened a lane names values on the lane."));
        }

        if (write.Credited)
        {
            if (!_ends.TryGetValue(write.Handle, out HomeEnd? end))
            {
                throw new RpcException(new Status(StatusCode.InvalidArgument, $"A credited Write on handle {write.Handle}, which is not a writing end granted credits on this stream."));
            }

            // Waited for from now on, so a value that comes while earlier ones are placed is not
            // held as pending (the credits bound how many are on their way).
            Task<LanePayload> arriving = _lane.TakeAsync(write.OpId, _node.Options.PeerTimeout, _closed);
            ulong opId = write.OpId;
            _placements?.Opened();
            InOrder(write.Handle, end, e => PlaceFromLaneAsync(e, opId, arriving));
            return;
        }

        Activity? activity = RemoteTracing.StartReceive(write.Traceparent);
        if (IsQueued(write.Handle) && _ends.ContainsKey(write.Handle))
        {
            // Counted against MaxBytesPerLink as soon as its bytes are here, not when its turn comes.
            Task<HeldPayload> arriving = HoldWhenArrivedAsync(_lane.TakeAsync(write.OpId, _node.Options.PeerTimeout, _closed));
            Start(write.OpId, write.Handle, static (end, ct, s) => s.session.WriteInOrder(end, s.handle, s.arriving, s.opId, ct), (session: this, handle: write.Handle, arriving, opId: write.OpId), activity: activity);
            return;
        }

        Start(write.OpId, write.Handle, static (end, ct, s) => s.session.WriteFromLaneAsync(end, s.inbox, s.opId, ct), (session: this, inbox: _lane, opId: write.OpId), activity: activity);
    }

    /// <summary>Whether frames on <paramref name="handle"/> wait for credited values still coming on the lane.</summary>
    private bool IsQueued(uint handle)
    {
        if (!_inOrder.TryGetValue(handle, out Task? before))
        {
            return false;
        }

        if (before.IsCompleted)
        {
            _inOrder.Remove(handle);
            return false;
        }

        return true;
    }

    /// <summary>Runs <paramref name="step"/> on the end once the work queued on its handle is done (at once if none is).</summary>
    private void InOrder(uint handle, HomeEnd end, Func<HomeEnd, Task> step)
    {
        Task mine = IsQueued(handle) ? AfterAsync(_inOrder[handle], end, step) : step(end);
        if (!mine.IsCompleted)
        {
            _inOrder[handle] = mine;
        }
    }

    private void InOrder(uint handle, HomeEnd end, Action<HomeEnd> step) =>
        InOrder(handle, end, e =>
        {
            step(e);
            return Task.CompletedTask;
        });

    private static async Task AfterAsync(Task before, HomeEnd end, Func<HomeEnd, Task> step)
    {
        await before.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await step(end).ConfigureAwait(false);
    }

    /// <summary>
    /// A credited value from the lane, or sent again on the link when the lane did not bring it
    /// (answered ABORTED); then, if it came on the lane, its OK: on its own, or gathered with others
    /// (<see cref="LanePlacements"/>) for a client that takes <see cref="LanePlaced"/> frames.
    /// </summary>
    private async Task PlaceFromLaneAsync(HomeEnd end, ulong opId, Task<LanePayload> arriving)
    {
        LanePlacements? placements = _placements;
        bool placedFromLane = false;
        int length = 0;
        try
        {
            LanePayload value;
            bool resent = false;
            try
            {
                value = await WhenArrivedAsync(arriving, placements).ConfigureAwait(false);
                if (value.Array is null)
                {
                    var again = new TaskCompletionSource<LanePayload>(TaskCreationOptions.RunContinuationsAsynchronously);
                    _resent[opId] = again;
                    Complete(opId, new OpResult(Outcome.Error, StatusCode.Aborted, $"The value of op {opId} did not come on the bulk lane: send it again on the link."));
                    resent = true;
                    try
                    {
                        value = await WhenArrivedAsync(again.Task.WaitAsync(_closed), placements).ConfigureAwait(false);
                    }
                    finally
                    {
                        _resent.TryRemove(opId, out _);
                    }
                }
            }
            catch (OperationCanceledException)
            {
                PlaceCredited(end, default, "its program's link closed before the value arrived on the bulk lane");
                return;
            }

            // A value sent again on the link takes its lane Write's place unanswered (link.proto, Write.lane).
            length = value.Length;
            placedFromLane = PlaceCredited(end, value, value.Array is null ? "it is larger than the largest value this program accepts (CspNodeOptions.MaxValueSize)" : null) && !resent;
        }
        finally
        {
            if (placements is null)
            {
                if (placedFromLane)
                {
                    Complete(opId, new OpResult(Outcome.Ok));
                }
            }
            else if (placedFromLane)
            {
                placements.Placed(opId, length);
            }
            else
            {
                placements.Ended();
            }
        }
    }

    /// <summary>A credited lane value's bytes; while it waits for them, the OKs gathered go out.</summary>
    private static async Task<LanePayload> WhenArrivedAsync(Task<LanePayload> arriving, LanePlacements? placements)
    {
        if (placements is null || arriving.IsCompleted)
        {
            return await arriving.ConfigureAwait(false);
        }

        placements.Waiting();
        try
        {
            return await arriving.ConfigureAwait(false);
        }
        finally
        {
            placements.Arrived();
        }
    }

    /// <summary>Places a credited value that waited its turn (its array goes back), or loses it saying why; true if placed.</summary>
    private static bool PlaceCredited(HomeEnd end, LanePayload value, string? lost)
    {
        try
        {
            if (lost is not null || value.Array is null)
            {
                end.LoseCredited(lost ?? "it did not arrive");
                return false;
            }

            // False only for an end granted no credits, which the Write's dispatch already refused.
            return end.PutCredited(value.Encoding, tooLarge: false);
        }
        finally
        {
            value.Return();
        }
    }

    /// <summary>
    /// A plain write behind credited values still coming on the lane: its value (<paramref name="arriving"/>,
    /// from the lane when <paramref name="laneOp"/> is not 0) is written once they are placed.
    /// </summary>
    private Task<OpResult> WriteInOrder(HomeEnd end, uint handle, Task<HeldPayload> arriving, ulong laneOp, CancellationToken cancellationToken)
    {
        var started = new TaskCompletionSource<Task<OpResult>>(TaskCreationOptions.RunContinuationsAsynchronously);
        if (laneOp != 0)
        {
            // A value refused by the byte bound is answered when it arrives, not when its turn comes.
            _ = AnswerRefusalAtOnceAsync(arriving, started);
        }

        InOrder(handle, end, async e =>
        {
            HeldPayload payload;
            try
            {
                payload = await arriving.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // Not written: the payload, if it still comes, goes back.
                _ = ReleaseWhenArrivedAsync(arriving);
                started.TrySetResult(Task.FromResult(new OpResult(Outcome.Cancelled)));
                return;
            }

            if (payload.Refused)
            {
                started.TrySetResult(Task.FromResult(HeldBytesRefused(payload.Held)));
                return;
            }

            LanePayload value = payload.Value;
            if (value.Array is null)
            {
                started.TrySetResult(Task.FromResult(new OpResult(Outcome.Error, StatusCode.Aborted, $"The value of op {laneOp} did not come on the bulk lane.")));
                return;
            }

            Task<OpResult> written;
            try
            {
                // WriteAsync decodes the value before it returns: the array goes back at once.
                written = e.WriteAsync(value.Encoding, cancellationToken);
            }
            catch
            {
                ReleaseBytes(payload.Held);
                throw;
            }
            finally
            {
                value.Return();
            }

            started.TrySetResult(payload.Held > 0 ? ReleasedWhenWrittenAsync(written, payload.Held) : written);
        });
        return started.Task.Unwrap();
    }

    /// <summary>
    /// A plain lane value that waits its turn, counted against the stream's bytes
    /// (<see cref="CspNodeOptions.MaxBytesPerLink"/>) from the moment it arrives, as an unqueued
    /// one is: refused (its array back at once) if the stream holds too much already.
    /// </summary>
    private async Task<HeldPayload> HoldWhenArrivedAsync(Task<LanePayload> arriving)
    {
        LanePayload value = await arriving.ConfigureAwait(false);
        if (value.Array is null)
        {
            return new HeldPayload(value, 0);
        }

        if (!TryHoldBytes(value.Length))
        {
            value.Return();
            return new HeldPayload(default, value.Length, Refused: true);
        }

        return new HeldPayload(value, value.Length);
    }

    private async Task AnswerRefusalAtOnceAsync(Task<HeldPayload> arriving, TaskCompletionSource<Task<OpResult>> started)
    {
        try
        {
            HeldPayload payload = await arriving.ConfigureAwait(false);
            if (payload.Refused)
            {
                started.TrySetResult(Task.FromResult(HeldBytesRefused(payload.Held)));
            }
        }
        catch (OperationCanceledException)
        {
            // The stream closed first: its turn answers nothing either.
        }
    }

    /// <summary>The write's outcome, once its value's counted bytes are given back.</summary>
    private async Task<OpResult> ReleasedWhenWrittenAsync(Task<OpResult> written, long held)
    {
        try
        {
            return await written.ConfigureAwait(false);
        }
        finally
        {
            ReleaseBytes(held);
        }
    }

    /// <summary>A lane value whose write was cancelled while it was on its way: its array and its count go back when it comes.</summary>
    private async Task ReleaseWhenArrivedAsync(Task<HeldPayload> arriving)
    {
        try
        {
            HeldPayload payload = await arriving.ConfigureAwait(false);
            payload.Value.Return();
            ReleaseBytes(payload.Held);
        }
        catch (OperationCanceledException)
        {
            // The stream closed first: nothing came.
        }
    }

    /// <summary>A value that waits its turn, the bytes counted for it (0: counted by its operation), and whether the count refused it.</summary>
    private readonly record struct HeldPayload(LanePayload Value, long Held, bool Refused = false);

    /// <summary>A value copied out of a frame's pooled arrays, for a write that waits its turn after the frame is gone.</summary>
    private static LanePayload Copy(ReadOnlySequence<byte> value)
    {
        byte[] array = ArrayPool<byte>.Shared.Rent((int)Math.Max(1, value.Length));
        value.CopyTo(array.AsSpan());
        return new LanePayload(array, (int)value.Length);
    }

    private async Task<OpResult> WriteFromLaneAsync(HomeEnd end, LaneInbox inbox, ulong opId, CancellationToken cancellationToken)
    {
        LanePayload payload;
        try
        {
            payload = await inbox.TakeAsync(opId, _node.Options.PeerTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return new OpResult(Outcome.Cancelled);
        }

        if (payload.Array is null)
        {
            // Nothing was written: the client sends the value again on the link (link.proto, Write.lane).
            return new OpResult(Outcome.Error, StatusCode.Aborted, $"The value of op {opId} did not come on the bulk lane.");
        }

        long held = payload.Length;
        if (!TryHoldBytes(held))
        {
            payload.Return();
            return HeldBytesRefused(held);
        }

        try
        {
            Task<OpResult> written;
            try
            {
                // WriteAsync decodes the value before it returns: the array goes back at once.
                written = end.WriteAsync(payload.Encoding, cancellationToken);
            }
            finally
            {
                payload.Return();
            }

            return await written.ConfigureAwait(false);
        }
        finally
        {
            ReleaseBytes(held);
        }
    }

    private void Start<TArg>(ulong opId, uint handle, Func<HomeEnd, CancellationToken, TArg, Task<OpResult>> operation, TArg argument, TaskCompletionSource<bool>? settled = null, Activity? activity = null, long heldBytes = 0, WriteReservation? offer = null)
    {
        RequireNew(opId);
        if (!_ends.TryGetValue(handle, out HomeEnd? end))
        {
            Complete(opId, new OpResult(Outcome.Error, StatusCode.NotFound, $"Handle {handle} is not attached on this stream."));
            RemoteTracing.Stop(activity, "not attached");
            return;
        }

        Home? home = end.Home;
        if (home?.Move is { } moving)
        {
            // The home is leaving: the operation is not run, and is answered once the move is decided.
            RemoteTracing.Stop(activity, "moved");
            _ = AnswerAfterMoveAsync(opId, moving);
            return;
        }

        if (RefusedOverOperations(opId))
        {
            RemoteTracing.Stop(activity, "too many operations");
            return;
        }

        if (heldBytes > 0 && !TryHoldBytes(heldBytes))
        {
            Complete(opId, HeldBytesRefused(heldBytes));
            RemoteTracing.Stop(activity, "too many bytes");
            return;
        }

        // Only this loop adds operations, and RequireNew found none with this op_id: the add succeeds.
        var cts = new CancellationTokenSource();
        home?.OperationStarted();
        _running[opId] = new RunningOp(handle, cts, settled, offer, home);
        Interlocked.Increment(ref _runningCount);
        if (home?.Move is not null)
        {
            // The move began after the check above and may have missed this operation: it stops at once.
            cts.Cancel();
        }

        _ = RunOperation(opId, cts, operation(end, cts.Token, argument), activity, heldBytes, home);
    }

    /// <summary>
    /// A reservation: Cancel ends it only until the value is set aside (its token); from then on
    /// only Settle (or the end of the stream or of the end, which settle it as "give back") does.
    /// </summary>
    private void StartReserve(Reserve reserve)
    {
        if (_ends.TryGetValue(reserve.Handle, out HomeEnd? writer) && writer.ReservesForWrites)
        {
            var reservation = new WriteReservation();
            Start(
                reserve.OpId,
                reserve.Handle,
                static (end, ct, s) => end.ReserveForWriteAsync(s.Wait, () => s.session.Send(new HomeFrame { Reserved = new Reserved { OpId = s.OpId } }), s.reservation, ct),
                (session: this, reserve.OpId, reserve.Wait, reservation),
                offer: reservation);
            return;
        }

        var settled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        Start(
            reserve.OpId,
            reserve.Handle,
            static (end, ct, s) => end.ReserveAsync(s.Wait, value => s.session.SendReserved(s.OpId, value), s.settled.Task, ct),
            (session: this, reserve.OpId, reserve.Wait, settled),
            settled);
    }

    private void SendReserved(ulong opId, PooledValueBuffer value) =>
        Send(new HomeFrame { Reserved = new Reserved { OpId = opId, Data = SendChunks(opId, value) }, Sent = value });

    /// <summary>Sends every chunk of a value but the last part, which it returns for the frame that ends the operation.</summary>
    private ByteString SendChunks(ulong opId, PooledValueBuffer value) =>
        ValueEncoder.Split(value.WrittenMemory, _node.Options.ChunkSize, (this, opId), static (s, part) => s.Item1.Send(new HomeFrame { Chunk = new Chunk { OpId = s.opId, Data = part } }));

    /// <summary>
    /// Refuses an operation whose op_id is still running. Checked before anything else answers it:
    /// an early answer (unknown handle, oversized value) would otherwise be a second Completed for
    /// the running operation's op_id, which the client would take as that operation's answer.
    /// </summary>
    private ulong RequireNew(ulong opId) => _running.ContainsKey(opId)
        ? throw new RpcException(new Status(StatusCode.InvalidArgument, $"Operation {opId} is already running: op_id must be unique on a stream."))
        : opId;

    /// <summary>
    /// Closes an end (link.proto, Detach): after the credited values sent before it (their slots
    /// are the end's until placed) its unused credits go back and its place is free; its pending
    /// operations are cancelled, giving back what they set aside. An op_id is answered once the
    /// place is free, also for a handle already gone, so that the client never waits in vain.
    /// </summary>
    private void Detach(Detach detach)
    {
        ulong opId = detach.OpId;
        if (!_ends.Remove(detach.Handle, out HomeEnd? detached))
        {
            if (opId != 0)
            {
                Complete(RequireNew(opId), OpResult.Ok);
            }

            return;
        }

        InOrder(detach.Handle, detached, end =>
        {
            end.Detach();
            end.Release();
            if (opId != 0)
            {
                Complete(opId, OpResult.Ok);
            }
        });
        CancelOperationsOn(detach.Handle);
    }

    /// <summary>A detached end's pending operations complete as CANCELLED (link.proto, Detach).</summary>
    private void CancelOperationsOn(uint handle)
    {
        foreach (RunningOp running in _running.Values)
        {
            if (running.Handle == handle)
            {
                running.Cancellation.Cancel();
                running.Decline();
            }
        }
    }

    private async Task RunOperation(ulong opId, CancellationTokenSource cts, Task<OpResult> operation, Activity? activity, long heldBytes, Home? home)
    {
        OpResult result = await operation.ConfigureAwait(false);
        ReleaseBytes(heldBytes);
        RemoteTracing.Stop(activity, result.Outcome == Outcome.Ok ? null : result.Outcome.ToString());

        // Removed before the answer leaves: a Cancel that arrives later finds nothing, and the
        // client learns the truth from this Completed. The source is not disposed: a Cancel frame
        // may be cancelling it right now, and it holds no timer or registration by then.
        _running.TryRemove(opId, out _);
        Interlocked.Decrement(ref _runningCount);
        GC.KeepAlive(cts);
        HomeMove? move = result.Outcome == Outcome.Cancelled ? home?.Move : null;
        home?.OperationEnded();
        if (move is not null)
        {
            // Cancelled by the home's move (or by the client as it began): nothing moved. The client
            // sends it again at the new home, or, if it had cancelled, takes MOVED as cancelled.
            await AnswerAfterMoveAsync(opId, move).ConfigureAwait(false);
            return;
        }

        Complete(opId, result);
    }

    /// <summary>
    /// Answers an operation the home's move stopped before it happened, once the move is decided:
    /// MOVED after the name has moved (so the client finds the new home when it resolves the name
    /// again), POISONED if no program took the home.
    /// </summary>
    private Task AnswerAfterMoveAsync(ulong opId, HomeMove move) => move.Track(AnswerWhenMovedAsync(opId, move));

    private async Task AnswerWhenMovedAsync(ulong opId, HomeMove move)
    {
        string? poison = await move.Released.ConfigureAwait(false);
        if (!_closed.IsCancellationRequested)
        {
            Complete(opId, poison is null ? OpResult.Moved : new OpResult(Outcome.Poisoned, StatusCode.OK, poison));
        }
    }

    /// <summary>The program at the other end, for messages.</summary>
    internal string Peer => _peer;

    /// <summary>Completes when the answers sent so far on this stream are written (or the stream ended).</summary>
    internal Task WhenAnswersWritten() => _out?.WhenWritten() ?? Task.CompletedTask;

    /// <summary>Cancels every operation running on <paramref name="home"/> (its move began); called from any thread.</summary>
    internal void CancelOperationsOn(Home home)
    {
        foreach (RunningOp running in _running.Values)
        {
            if (ReferenceEquals(running.Home, home))
            {
                running.Cancellation.Cancel();
            }
        }
    }

    /// <summary>Gives back what reservations on <paramref name="home"/> set aside and were not settled in time; called from any thread.</summary>
    internal void DeclineOperationsOn(Home home)
    {
        foreach (RunningOp running in _running.Values)
        {
            if (ReferenceEquals(running.Home, home))
            {
                running.Decline();
            }
        }
    }

    /// <summary>
    /// Asks the client to spend no more credits on <paramref name="end"/> (link.proto, StopCredits);
    /// true once its answer has come and every credited value before it is placed (the end's unused
    /// slots released), or once the stream has ended; false if no answer came within <paramref name="bound"/>.
    /// </summary>
    internal async Task<bool> StopCreditsAsync(HomeEnd end, TimeSpan bound)
    {
        uint handle = end.Handle;
        var asking = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        // A stop still unanswered (a move that was cancelled or gave up while the client was slow)
        // is joined rather than asked again: its answer comes behind every credited Write sent
        // before it, and the client spends no credit after it, so it serves this move as well.
        TaskCompletionSource stopped = _creditStops.GetOrAdd(handle, asking);
        try
        {
            using CancellationTokenRegistration closed = _closed.Register(static s => ((TaskCompletionSource)s!).TrySetResult(), stopped);
            if (ReferenceEquals(stopped, asking))
            {
                Send(new HomeFrame { StopCredits = new StopCredits { Handle = handle } });
            }

            // Left pending past the bound: its late answer (which removes it) settles a later move's wait.
            await stopped.Task.WaitAsync(bound).ConfigureAwait(false);
            return true;
        }
        catch (Exception e) when (e is TimeoutException or ObjectDisposedException)
        {
            return e is ObjectDisposedException; // the stream ended: its end's credits closed with it
        }
    }

    /// <summary>The client spends no more credits on <paramref name="handle"/>: once its credited values are placed, the end's unused slots go back.</summary>
    private void CreditsStopped(uint handle)
    {
        if (!_ends.TryGetValue(handle, out HomeEnd? end))
        {
            Answered(handle);
            return;
        }

        InOrder(handle, end, e =>
        {
            e.StopCredits();
            Answered(handle);
        });

        void Answered(uint stopped)
        {
            if (_creditStops.TryRemove(stopped, out TaskCompletionSource? waiting))
            {
                waiting.TrySetResult();
            }
        }
    }

    /// <summary>
    /// Offers the client's program a home this program is leaving (link.proto, Handover), after the
    /// buffered values it holds (HandoverValue, each split into frames of at most ChunkSize); the
    /// incarnation it took the home under, or null if it did not. Silent: no answer, and no
    /// acknowledgement of the values (HandoverProgress) either, within <paramref name="bound"/>
    /// of the last one (or of the offer's frames being queued).
    /// </summary>
    internal async Task<HandoverAnswer> OfferHomeAsync(Handover offer, IReadOnlyList<byte[]> values, TimeSpan bound)
    {
        using var pending = new HandoverOffer(bound);
        if (_closed.IsCancellationRequested || !_handovers.TryAdd(offer.Name, pending))
        {
            return new HandoverAnswer(null, Silent: false);
        }

        try
        {
            foreach (byte[] value in values)
            {
                ByteString last = ValueEncoder.Split(value, _node.Options.ChunkSize, (this, offer.Name), static (s, part) => s.Item1.Send(new HomeFrame { HandoverValue = new HandoverValue { Name = s.Name, Data = part, More = true } }));
                Send(new HomeFrame { HandoverValue = new HandoverValue { Name = offer.Name, Data = last } });
            }

            Send(new HomeFrame { Handover = offer });
            pending.Progressed(); // the bound runs from here, and again from each acknowledgement
            using CancellationTokenRegistration closed = _closed.Register(static a => ((HandoverOffer)a!).Answer(null), pending);
            return new HandoverAnswer(await pending.Taker.WaitAsync(pending.Silence).ConfigureAwait(false), Silent: false);
        }
        catch (OperationCanceledException) when (pending.Silence.IsCancellationRequested)
        {
            return new HandoverAnswer(null, Silent: true);
        }
        catch (ObjectDisposedException)
        {
            return new HandoverAnswer(null, Silent: false); // the stream ended meanwhile
        }
        finally
        {
            _handovers.TryRemove(new KeyValuePair<string, HandoverOffer>(offer.Name, pending));
        }
    }

    /// <summary>
    /// Tells the client's program how a channel left with this program (link.proto, HomeLeft): it
    /// moved (<paramref name="poison"/> empty) or is poisoned. Its operations this link loses later
    /// follow the move or fail with the poison, rather than finding the home lost. Sent after the
    /// answers of the operations held back, so that every operation answered after it was never
    /// performed here.
    /// </summary>
    internal void TellHomeLeft(string name, string poison)
    {
        if (_closed.IsCancellationRequested)
        {
            return;
        }

        try
        {
            Send(new HomeFrame { HomeLeft = new HomeLeft { Name = name, Poison = poison } });
        }
        catch (ObjectDisposedException)
        {
            // The stream ended meanwhile: that program has no link to this one to fail on.
        }
    }

    private void Complete(ulong opId, OpResult result)
    {
        var completed = new Completed
        {
            OpId = opId,
            Outcome = result.Outcome,
            Status = (int)result.Status,
            Message = result.Message ?? string.Empty,
            Count = result.Count,
            CreditUsed = result.CreditUsed,
        };

        if (result.Value is { } value)
        {
            completed.Data = SendChunks(opId, value);
        }

        Send(new HomeFrame { Completed = completed, Sent = result.Value });
    }

    private void Send(HomeFrame frame) => _out!.Send(frame);

    private void Close(bool lost)
    {
        // Credited values still coming on the lane will not: each is lost (its channel poisoned, saying so).
        _closing.Cancel();
        if (_laneSecret is not null)
        {
            _node.Lanes?.Close(_laneSecret);
        }

        _lane?.End(releaseArrived: true);

        // Values whose Write never came: their pooled parts go back with the stream.
        foreach (ValueAssembler abandoned in _chunks.Values)
        {
            abandoned.Release();
        }

        _chunks.Clear();
        _assemblyBytes = 0;

        foreach (RunningOp running in _running.Values)
        {
            running.Cancellation.Cancel();

            // A value set aside for this client goes back: nothing is lost with the stream.
            running.Decline();
        }

        foreach ((uint handle, HomeEnd end) in _ends)
        {
            // After the credited values queued on the end: their slots are its own until then.
            if (lost)
            {
                InOrder(handle, end, e =>
                {
                    e.Lost(_peer);
                    e.Release();
                });
            }
            else
            {
                InOrder(handle, end, static e =>
                {
                    e.Detach();
                    e.Release();
                });
            }
        }

        if (lost)
        {
            Log.LinkLost(_node.Logger, _peer);
        }

        _ends.Clear();
    }

    /// <summary>An operation in progress: the end it runs on (a Detach cancels it), its cancellation, and for a reservation the client's Settle.</summary>
    private readonly record struct RunningOp(uint Handle, CancellationTokenSource Cancellation, TaskCompletionSource<bool>? Settled, WriteReservation? Offer = null, Home? Home = null)
    {
        /// <summary>Gives back what a reservation set aside (a value for a reader, a reader or slot for a writer) unless it was taken already.</summary>
        internal void Decline()
        {
            Settled?.TrySetResult(false);
            Offer?.Decline();
        }
    }

    private static partial class Log
    {
        [LoggerMessage(1, LogLevel.Debug, "Link from {Peer} opened.")]
        internal static partial void LinkOpened(ILogger logger, string peer);

        [LoggerMessage(2, LogLevel.Warning, "Link from {Peer} lost: its ends were released and channels it alone wrote to were poisoned.")]
        internal static partial void LinkLost(ILogger logger, string peer);

        [LoggerMessage(3, LogLevel.Warning, "Link from {Peer} refused: {Reason}")]
        internal static partial void StreamRefused(ILogger logger, string peer, string reason);

        [LoggerMessage(5, LogLevel.Warning, "{Peer} did not take over the home of '{Name}': {Reason}")]
        internal static partial void HomeRefused(ILogger logger, string name, string peer, string reason);

        [LoggerMessage(4, LogLevel.Debug, "Link from {Peer}: more than {Limit} replies wait for the client to read them; its frames are not read until half have left.")]
        internal static partial void RepliesBacklogged(ILogger logger, string peer, int limit);
    }
}
