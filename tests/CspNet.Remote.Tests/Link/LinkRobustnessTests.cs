using System.Collections.Concurrent;
using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Xunit.Abstractions;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// Untrusted input on the Link service: raw streams from a client that breaks every rule of
/// link.proto. Each operation that gets an answer gets one of the protocol's own outcomes and
/// statuses, a stream whose framing is broken ends with a status (never UNKNOWN: a handler that
/// threw), and afterwards the node and the NameServer serve a well-behaved program exactly.
/// </summary>
public sealed class LinkRobustnessTests(ITestOutputHelper output)
{
    private const int FrameStreams = 480;
    private const int FramesPerStream = 22;
    private const int RawStreams = 120;
    private const int RawFramesPerStream = 16;
    private const int FloodStreams = 2;
    private const int ValidValues = 1000;

    // Small limits make an oversized value cheap to send. The chunk size is the smallest allowed.
    private const long MaxValueSize = 64;
    private const int ChunkSize = 1024;

    // Handles 1..3 are the only ones ever attached to "numbers", so that no frame meant for the
    // victims (Poison, or data that happens to decode) can reach the channel under test.
    private const uint NumbersHandles = 3;
    private const uint OtherHandles = 40;
    private const ulong AbandonedOps = 1UL << 40;

    private static readonly Marshaller<byte[]> RawBytes = Marshallers.Create(static b => b, static b => b);
    private static readonly Method<byte[], byte[]> RawConnect = new(MethodType.DuplexStreaming, "cspnet.link.v1.Link", "Connect", RawBytes, RawBytes);

    private static readonly HashSet<StatusCode> ErrorStatuses =
        [StatusCode.InvalidArgument, StatusCode.NotFound, StatusCode.FailedPrecondition, StatusCode.ResourceExhausted, StatusCode.Unimplemented];

    private static readonly HashSet<StatusCode> StreamEnds = [StatusCode.OK, StatusCode.InvalidArgument, StatusCode.ResourceExhausted];

    [Fact(Timeout = 60_000)]
    public async Task Connect_TenThousandMutatedFrames_AnswersWithStatusesAndKeepsServing()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o =>
        {
            o.MaxValueSize = MaxValueSize;
            o.ChunkSize = ChunkSize;
        });
        AltingChannelIn<int> numbers = await home.GetAny2OneInAsync<int>("numbers");
        _ = await home.GetAny2AnyInAsync<string>("strings");
        _ = await home.GetBarrierAsync("gate", 3);
        _ = await home.GetBucketAsync("pail");

        // The channel's only reader, a process of the home program: it takes every value written,
        // the storm's well-formed ones (all negative) and then the valid program's (0, 1, ...).
        var received = new ConcurrentQueue<int>();
        Task reader = Task.Run(async () =>
        {
            for (int value = await numbers.ReadAsync(); value != int.MaxValue; value = await numbers.ReadAsync())
            {
                received.Enqueue(value);
            }
        });

        var storm = new Storm();
        // The frame streams share two connections, as many streams of a program share one. Not one:
        // Kestrel answers ENHANCE_YOUR_CALM on a connection where it has had to end too many
        // streams, and hundreds of these streams end with INVALID_ARGUMENT on purpose.
        using (var channel = UserKey.Channel($"http://127.0.0.1:{home.Port}", new GrpcChannelOptions { MaxSendMessageSize = null }))
        using (var second = UserKey.Channel($"http://127.0.0.1:{home.Port}", new GrpcChannelOptions { MaxSendMessageSize = null }))
        {
            Proto.Link.LinkClient[] clients = [new(channel), new(second)];
            await System.Threading.Tasks.Parallel.ForEachAsync(Enumerable.Range(0, FrameStreams + RawStreams + FloodStreams), new ParallelOptions { MaxDegreeOfParallelism = 16 }, async (i, _) =>
            {
                // One seed per stream: a failure names the stream that caused it, and reruns the same.
                if (i < FrameStreams)
                {
                    await new FrameStream(clients[i % 2], new Random(i), storm, $"stream {i}").RunAsync();
                }
                else if (i < FrameStreams + RawStreams)
                {
                    // A connection of its own, as each program has: garbage may make the home's HTTP/2
                    // layer reset the connection it came on, which must not end anyone else's streams.
                    using var own = UserKey.Channel($"http://127.0.0.1:{home.Port}");
                    await RawStreamAsync(own.CreateCallInvoker(), new Random(i), storm, $"raw stream {i}");
                }
                else
                {
                    await new FrameStream(clients[i % 2], new Random(i), storm, $"flood stream {i}").FloodAsync();
                }
            });
        }

        output.WriteLine($"{storm.Frames} frames: {storm.Describe()}");
        Assert.True(storm.Problems.IsEmpty, $"{storm.Problems.Count} problems, first: {string.Join(Environment.NewLine, storm.Problems.Take(30))}{Environment.NewLine}{storm.Describe()}");
        Assert.True(storm.Frames >= 10_000, $"only {storm.Frames} frames sent");
        Assert.True(storm.Tally.GetValueOrDefault("end Unavailable") <= RawStreams / 10, storm.Describe());
        Assert.True(storm.Tally.ContainsKey("end OK") && storm.Tally.ContainsKey("end InvalidArgument") && storm.Tally.ContainsKey("end ResourceExhausted"), storm.Describe());
        foreach (string needed in new[] { "attached OK", "attached NotFound", "attached FailedPrecondition", "attached InvalidArgument", "Ok", "Cancelled", "Error InvalidArgument", "Error NotFound", "Error FailedPrecondition", "Error ResourceExhausted" })
        {
            Assert.True(storm.Tally.ContainsKey(needed), $"no '{needed}' in {storm.Describe()}");
        }

        // A well-behaved program in another node writes through the same home.
        CspNode writer = await system.NodeAsync("valid-writer");
        AltingChannelOut<int> valid = await writer.GetAny2OneOutAsync<int>("numbers");
        for (int i = 0; i < ValidValues; i++)
        {
            await valid.WriteAsync(i);
        }

        await valid.WriteAsync(int.MaxValue);
        await reader;

        int[] all = [.. received];
        Assert.Equal(Enumerable.Range(0, ValidValues), all.Where(v => v >= 0));
        int[] stormValues = [.. all.Where(v => v < 0)];
        Assert.Equal(stormValues.Length, stormValues.Distinct().Count());
        Assert.Empty(storm.Delivered.Except(stormValues)); // a write answered OK was read, once

        using var names = UserKey.Channel(system.NameServer);
        Proto.ResolveReply resolved = await new Proto.NameServer.NameServerClient(names).ResolveAsync(new Proto.ResolveRequest { Name = "numbers" });
        Assert.Equal(("Any2One", "int32", home.Port), (resolved.Entry.Kind, resolved.Entry.ValueType, resolved.Entry.Endpoint.Port));
    }

    /// <summary>Bytes that are mostly not a ClientFrame: garbage, truncated and bit-flipped frames, now and then one too large.</summary>
    private static async Task RawStreamAsync(CallInvoker invoker, Random random, Storm storm, string label)
    {
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        using AsyncDuplexStreamingCall<byte[], byte[]> call = invoker.AsyncDuplexStreamingCall(RawConnect, null, new CallOptions(cancellationToken: deadline.Token));
        Task<Status> reading = ReadRawAsync(call.ResponseStream, storm, label);
        byte[] hello = new Proto.ClientFrame { Hello = new Proto.Hello { ProtocolVersion = 1, Program = label } }.ToByteArray();
        byte[][] templates =
        [
            new Proto.ClientFrame { Read = new Proto.Read { Handle = 7, OpId = 9 } }.ToByteArray(),
            new Proto.ClientFrame { Write = new Proto.Write { Handle = 700, OpId = 10, Data = ByteString.CopyFromUtf8("a value") } }.ToByteArray(),
            new Proto.ClientFrame { Chunk = new Proto.Chunk { OpId = AbandonedOps + 3, Data = ByteString.CopyFromUtf8("part of a value") } }.ToByteArray(),
            new Proto.ClientFrame { Cancel = new Proto.Cancel { OpId = 12 } }.ToByteArray(),
            new Proto.ClientFrame { Poison = new Proto.Poison { Handle = 900 } }.ToByteArray(),
            new Proto.ClientFrame { Sync = new Proto.SyncOp { Handle = 800, OpId = 13, Kind = Proto.SyncKind.BucketFlush } }.ToByteArray(),
            new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 5, Name = "nowhere", Kind = "Bucket", Role = Proto.Role.Bucket } }.ToByteArray(),
            new Proto.ClientFrame { Batch = new Proto.FrameBatch { Frames = { new Proto.ClientFrame { Read = new Proto.Read { Handle = 7, OpId = 14 } }, new Proto.ClientFrame { Cancel = new Proto.Cancel { OpId = 14 } } } } }.ToByteArray(),
        ];

        var frames = new List<byte[]>();
        if (random.Next(5) != 0)
        {
            frames.Add(hello);
        }

        for (int i = 0; i < RawFramesPerStream; i++)
        {
            byte[] template = templates[random.Next(templates.Length)];
            frames.Add(random.Next(5) switch
            {
                0 => Garbage(random, random.Next(1, 40)),
                1 => template[..random.Next(1, template.Length)], // truncated
                2 => Flipped(random, template),
                3 when random.Next(8) == 0 => Garbage(random, ChunkSize + (80 << 10)), // over the message limit
                _ => template,
            });
        }

        foreach (byte[] frame in frames)
        {
            if (!await TrySendAsync(call.RequestStream, frame, storm))
            {
                break;
            }
        }

        await TryCompleteAsync(call.RequestStream);
        Status end = await reading;
        storm.Count("end " + end.StatusCode);
        if (!StreamEnds.Contains(end.StatusCode) && !(end.StatusCode == StatusCode.Unavailable && end.Detail.Contains("reset by peer", StringComparison.Ordinal)))
        {
            storm.Problems.Enqueue($"{label}: ended with {end}");
        }
    }

    private static async Task<Status> ReadRawAsync(IAsyncStreamReader<byte[]> replies, Storm storm, string label)
    {
        try
        {
            while (await replies.MoveNext())
            {
                Proto.HomeFrame frame = Proto.HomeFrame.Parser.ParseFrom(replies.Current);
                if (frame.BodyCase == Proto.HomeFrame.BodyOneofCase.Completed)
                {
                    storm.CheckCompleted(frame.Completed, label);
                }
            }

            return Status.DefaultSuccess;
        }
        catch (RpcException e)
        {
            return e.Status;
        }
    }

    private static byte[] Garbage(Random random, int length)
    {
        var bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    private static byte[] Flipped(Random random, byte[] template)
    {
        byte[] bytes = [.. template];
        for (int flips = random.Next(1, 4); flips > 0; flips--)
        {
            bytes[random.Next(bytes.Length)] ^= (byte)(1 << random.Next(8));
        }

        return bytes;
    }

    private static async Task<bool> TrySendAsync<T>(IClientStreamWriter<T> writer, T frame, Storm storm)
    {
        try
        {
            await writer.WriteAsync(frame);
            Interlocked.Increment(ref storm.Frames);
            return true;
        }
        catch (Exception e) when (e is RpcException or InvalidOperationException or IOException || IsClientResetRace(e))
        {
            return false; // the home already ended the stream; the reply loop reports how
        }
    }

    /// <summary>
    /// SocketsHttpHandler (the test's client, not the code under test) can throw a
    /// NullReferenceException from a write racing the reset of its stream or connection, which the
    /// garbage streams provoke on purpose (the same family as dotnet/corefx#38293). What the home
    /// did is still checked from the reply loop's status.
    /// </summary>
    private static bool IsClientResetRace(Exception e) =>
        e is NullReferenceException && e.StackTrace?.Contains("System.Net.Http.Http2Connection", StringComparison.Ordinal) == true;

    private static async Task TryCompleteAsync<T>(IClientStreamWriter<T> writer)
    {
        try
        {
            await writer.CompleteAsync();
        }
        catch (Exception e) when (e is RpcException or InvalidOperationException or IOException || IsClientResetRace(e))
        {
        }
    }

    /// <summary>What the whole storm saw: a tally of answers and the answers that break the rules.</summary>
    private sealed class Storm
    {
        public int Frames;

        public ConcurrentQueue<string> Problems { get; } = new();

        public ConcurrentDictionary<string, int> Tally { get; } = new();

        /// <summary>The storm's values whose writes were answered OK: the reader must have them.</summary>
        public ConcurrentBag<int> Delivered { get; } = [];

        public void Count(string what) => Tally.AddOrUpdate(what, 1, static (_, n) => n + 1);

        public string Describe() => string.Join(", ", Tally.OrderBy(p => p.Key, StringComparer.Ordinal).Select(p => $"{p.Key}: {p.Value}"));

        public void CheckCompleted(Proto.Completed completed, string label)
        {
            var status = (StatusCode)completed.Status;
            bool proper = completed.Outcome switch
            {
                Proto.Outcome.Ok or Proto.Outcome.Cancelled or Proto.Outcome.Poisoned => status == StatusCode.OK,
                Proto.Outcome.Error => ErrorStatuses.Contains(status),
                _ => false,
            };
            Count(completed.Outcome == Proto.Outcome.Error ? $"Error {status}" : completed.Outcome.ToString());
            if (!proper)
            {
                Problems.Enqueue($"{label}: op {completed.OpId} completed {completed.Outcome} {status}: {completed.Message}");
            }
        }
    }

    /// <summary>
    /// One Link stream of well-formed frames in a mangled order: each operation it starts is
    /// tracked until answered, and a stream that broke no framing rule must end OK with every
    /// operation answered exactly once.
    /// </summary>
    private sealed class FrameStream(Proto.Link.LinkClient client, Random random, Storm storm, string label)
    {
        private static readonly string[] Kinds = ["One2One", "Any2One", "One2Any", "Any2Any", "Barrier", "Bucket", "", "any2one", "Channel"];
        private static readonly string[] ValueTypes = ["int32", "int64", "string", "", "json:System.Int32", "opt:int32"];

        private readonly Lock _lock = new();
        private readonly Dictionary<ulong, int> _pending = [];   // op_id -> answers still owed
        private readonly Dictionary<uint, int> _attaching = [];  // handle -> Attached still owed
        private readonly Dictionary<ulong, int> _numbers = [];   // op_id -> well-formed value written to "numbers"
        private readonly List<uint> _attached = [];              // handles an Attach was sent for
        private readonly TaskCompletionSource _answered = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly HashSet<ulong> _reserved = [];           // reservations whose value was set aside (Reserved)
        private readonly HashSet<ulong> _settledInDrain = [];     // reservations the drain sent Settle for
        private TaskCompletionSource _reservedArrived = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> _call = null!;
        private ulong _nextOp;
        private ulong _nextAbandoned = AbandonedOps;
        private bool _draining;
        private bool _mustBreak; // a frame was sent that ends the stream with INVALID_ARGUMENT
        private bool _mayBreak;  // a frame was sent that may (op_id reused while its op may still run)

        public async Task RunAsync()
        {
            using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = _call = client.Connect(cancellationToken: deadline.Token);
            Task<StatusCode> reading = ReadAsync();
            bool open = await SendAsync(Opening());
            for (int i = 0; i < FramesPerStream && open; i++)
            {
                List<Proto.ClientFrame> next = Next();
                if (random.Next(3) == 0)
                {
                    // The same frames as one FrameBatch: the home must answer exactly as if each had come alone.
                    next = [new Proto.ClientFrame { Batch = new Proto.FrameBatch { Frames = { next } } }];
                }

                foreach (Proto.ClientFrame frame in next)
                {
                    if (!(open = await SendAsync(frame)))
                    {
                        break;
                    }
                }
            }

            if (open)
            {
                // Ask every operation still running to stop, and wait for all the answers owed: a
                // stream that broke no rule must answer each operation exactly once. A reservation
                // that has set a value aside ignores Cancel: it is given back with Settle(false),
                // also when its Reserved arrives during the drain.
                var cancelled = new HashSet<ulong>();
                var settled = new HashSet<ulong>();
                while (true)
                {
                    ulong[] running, reserved;
                    Task more;
                    lock (_lock)
                    {
                        _draining = true;
                        running = [.. _pending.Keys.Where(cancelled.Add)];
                        reserved = [.. _reserved.Where(settled.Add)];
                        _settledInDrain.UnionWith(reserved);
                        more = (_reservedArrived = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
                        CheckAnswered();
                    }

                    foreach (ulong op in running)
                    {
                        _ = await SendAsync(new Proto.ClientFrame { Cancel = new Proto.Cancel { OpId = op } });
                    }

                    foreach (ulong op in reserved)
                    {
                        _ = await SendAsync(new Proto.ClientFrame { Settle = new Proto.Settle { OpId = op } });
                    }

                    if (await Task.WhenAny(_answered.Task, reading, more) != more)
                    {
                        break;
                    }
                }
            }

            await TryCompleteAsync(call.RequestStream);
            Finish(await reading, expected: _mustBreak ? StatusCode.InvalidArgument : _mayBreak ? null : StatusCode.OK);
        }

        /// <summary>Chunks of more and more values that never get their Write: the home must refuse to keep them all.</summary>
        public async Task FloodAsync()
        {
            using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = _call = client.Connect(cancellationToken: deadline.Token);
            Task<StatusCode> reading = ReadAsync();
            bool open = await SendAsync(Hello());
            for (int i = 0; i < 5000 && open; i++)
            {
                open = await SendAsync(new Proto.ClientFrame { Chunk = new Proto.Chunk { OpId = _nextAbandoned++, Data = ByteString.CopyFrom(Garbage(random, random.Next(1, 2 * (int)MaxValueSize))) } });
            }

            await TryCompleteAsync(call.RequestStream);
            Finish(await reading, expected: StatusCode.ResourceExhausted);
        }

        private void Finish(StatusCode end, StatusCode? expected)
        {
            storm.Count("end " + end);
            if (!StreamEnds.Contains(end) || (expected is { } status && end != status))
            {
                storm.Problems.Enqueue($"{label}: ended with {end}, expected {expected?.ToString() ?? "a stream status"}");
            }

            lock (_lock)
            {
                if (end == StatusCode.OK && (_pending.Count > 0 || _attaching.Count > 0))
                {
                    storm.Problems.Enqueue($"{label}: ended OK with ops [{string.Join(", ", _pending.Keys)}] and handles [{string.Join(", ", _attaching.Keys)}] unanswered");
                }
            }
        }

        private async Task<bool> SendAsync(Proto.ClientFrame frame) => await TrySendAsync(_call.RequestStream, frame, storm);

        private async Task<StatusCode> ReadAsync()
        {
            try
            {
                while (await _call.ResponseStream.MoveNext())
                {
                    Receive(_call.ResponseStream.Current);
                }

                return StatusCode.OK;
            }
            catch (RpcException e)
            {
                return e.StatusCode;
            }
        }

        private void Receive(Proto.HomeFrame frame)
        {
            lock (_lock)
            {
                switch (frame.BodyCase)
                {
                    case Proto.HomeFrame.BodyOneofCase.Hello:
                    case Proto.HomeFrame.BodyOneofCase.Chunk:
                        break;
                    case Proto.HomeFrame.BodyOneofCase.Attached:
                        var status = (StatusCode)frame.Attached.Status;
                        storm.Count("attached " + status);
                        if (!Owed(_attaching, frame.Attached.Handle) || status is not (StatusCode.OK or StatusCode.NotFound or StatusCode.FailedPrecondition or StatusCode.InvalidArgument))
                        {
                            storm.Problems.Enqueue($"{label}: Attached {frame.Attached.Handle} {status} unasked or improper: {frame.Attached.Message}");
                        }

                        break;
                    case Proto.HomeFrame.BodyOneofCase.Completed:
                        Proto.Completed completed = frame.Completed;
                        storm.CheckCompleted(completed, label);
                        // A writing end's reservation also ends by a Deliver (a storm frame may be
                        // one): a Settle the drain sent for it before that answer arrived is then
                        // answered FAILED_PRECONDITION, once, as link.proto says.
                        bool settledTooLate = completed.Status == (int)StatusCode.FailedPrecondition && _settledInDrain.Remove(completed.OpId) && !_pending.ContainsKey(completed.OpId);
                        if (!settledTooLate && !Owed(_pending, completed.OpId))
                        {
                            storm.Problems.Enqueue($"{label}: op {completed.OpId} answered but not owed ({completed.Outcome} {completed.Message})");
                        }

                        _reserved.Remove(completed.OpId);
                        if (_numbers.Remove(completed.OpId, out int value) && completed.Outcome == Proto.Outcome.Ok)
                        {
                            storm.Delivered.Add(value);
                        }

                        break;
                    case Proto.HomeFrame.BodyOneofCase.Ready:
                    case Proto.HomeFrame.BodyOneofCase.Reserved:
                        ulong opId = frame.BodyCase == Proto.HomeFrame.BodyOneofCase.Ready ? frame.Ready.OpId : frame.Reserved.OpId;
                        storm.Count(frame.BodyCase.ToString());
                        if (!_pending.ContainsKey(opId))
                        {
                            storm.Problems.Enqueue($"{label}: {frame.BodyCase} for op {opId}, which is not running");
                        }
                        else if (frame.BodyCase == Proto.HomeFrame.BodyOneofCase.Reserved)
                        {
                            _reserved.Add(opId);
                            _reservedArrived.TrySetResult();
                        }

                        break;
                    default:
                        storm.Problems.Enqueue($"{label}: unexpected {frame.BodyCase}");
                        break;
                }

                CheckAnswered();
            }
        }

        private static bool Owed<TKey>(Dictionary<TKey, int> owed, TKey key)
            where TKey : notnull
        {
            if (!owed.TryGetValue(key, out int count))
            {
                return false;
            }

            if (count == 1)
            {
                owed.Remove(key);
            }
            else
            {
                owed[key] = count - 1;
            }

            return true;
        }

        private void CheckAnswered()
        {
            if (_draining && _pending.Count == 0 && _attaching.Count == 0)
            {
                _answered.TrySetResult();
            }
        }

        private static Proto.ClientFrame Hello() => new() { Hello = new Proto.Hello { ProtocolVersion = 1, Program = "fuzz" } };

        private Proto.ClientFrame Opening()
        {
            switch (random.Next(12))
            {
                case 0:
                    _mustBreak = true;
                    return new Proto.ClientFrame { Hello = new Proto.Hello { ProtocolVersion = (uint)random.Next(2, 5) * (uint)random.Next(0, 2), Program = "wrong version" } };
                case 1:
                    _mustBreak = true;
                    return Expect(new Proto.ClientFrame { Read = new Proto.Read { Handle = 1, OpId = 1 } }, op: null); // no Hello
                default:
                    return Hello();
            }
        }

        /// <summary>The next frames: one step of a well-behaved client, or one of its many mistakes.</summary>
        private List<Proto.ClientFrame> Next()
        {
            uint handle = Handle();
            switch (random.Next(20))
            {
                case 0:
                case 1:
                    return [AttachValid()];
                case 2:
                    return [AttachInvalid()];
                case 3:
                case 4:
                case 5:
                    return WriteNumber(random.Next(1, (int)NumbersHandles + 1));
                case 6:
                    return WriteOther(handle);
                case 7:
                    return [Op(new Proto.ClientFrame { Read = new Proto.Read { Handle = handle } })];
                case 8:
                    return [Op(new Proto.ClientFrame { Sync = new Proto.SyncOp { Handle = handle, Kind = (Proto.SyncKind)random.Next(0, 5) } })];
                case 9:
                    return [new Proto.ClientFrame { Chunk = new Proto.Chunk { OpId = _nextAbandoned++, Data = ByteString.CopyFrom(Garbage(random, random.Next(0, 100))) } }];
                case 10:
                    return [new Proto.ClientFrame { Cancel = new Proto.Cancel { OpId = random.Next(2) == 0 ? _nextOp + 1 + (ulong)random.Next(100) : (ulong)random.Next(1, (int)_nextOp + 2) } }];
                case 11:
                    return [Op(new Proto.ClientFrame { Watch = new Proto.Watch { Handle = handle } })];
                case 12:
                    return [Op(new Proto.ClientFrame { Reserve = new Proto.Reserve { Handle = handle } })];
                case 13:
                    return [Op(new Proto.ClientFrame { Settle = new Proto.Settle { Accept = random.Next(2) == 0 } })];
                case 14:
                    // Poisons an unknown handle, or a victim; never "numbers", which the test checks.
                    return [new Proto.ClientFrame { Poison = new Proto.Poison { Handle = random.Next(3) == 0 ? NumbersHandles + 1 + (uint)random.Next((int)OtherHandles) : 1000 + (uint)random.Next(1000) } }];
                case 15:
                    return [new Proto.ClientFrame { Detach = new Proto.Detach { Handle = random.Next(2) == 0 ? handle : (uint)random.Next(2000) } }];
                case 16:
                    return ReuseOpId();
                case 17 when random.Next(6) == 0:
                    _mustBreak = true;
                    // An empty frame, a second Hello, or a batch holding a Hello or a batch (only operation frames may be batched).
                    return [random.Next(3) switch
                    {
                        0 => new Proto.ClientFrame(),
                        1 => Hello(),
                        _ => new Proto.ClientFrame { Batch = new Proto.FrameBatch { Frames = { Op(new Proto.ClientFrame { Read = new Proto.Read { Handle = handle } }), random.Next(2) == 0 ? Hello() : new Proto.ClientFrame { Batch = new Proto.FrameBatch() } } } },
                    }];
                default:
                    return [Op(new Proto.ClientFrame { Read = new Proto.Read { Handle = 1000 + (uint)random.Next(1000) } })];
            }
        }

        private uint Handle() => random.Next(4) switch
        {
            0 when _attached.Count > 0 => _attached[random.Next(_attached.Count)],
            1 => (uint)random.Next(1, (int)(NumbersHandles + OtherHandles)),
            2 => 1000 + (uint)random.Next(1000),
            _ => random.Next(2) == 0 ? 0 : uint.MaxValue,
        };

        private Proto.ClientFrame AttachValid() => random.Next(5) switch
        {
            0 or 1 => AttachFrame(1 + (uint)random.Next((int)NumbersHandles), "numbers", "Any2One", "int32", Proto.Role.Writer),
            2 => AttachFrame(OtherHandle(), "strings", "Any2Any", "string", random.Next(2) == 0 ? Proto.Role.Reader : Proto.Role.Writer),
            3 => AttachFrame(OtherHandle(), "gate", "Barrier", string.Empty, Proto.Role.Barrier),
            _ => AttachFrame(OtherHandle(), "pail", "Bucket", string.Empty, Proto.Role.Bucket),
        };

        private Proto.ClientFrame AttachInvalid()
        {
            uint numbersHandle = 1 + (uint)random.Next((int)NumbersHandles);
            return random.Next(6) switch
            {
                0 => AttachFrame(OtherHandle(), "no-such-" + random.Next(100), "Any2One", "int32", Proto.Role.Writer),
                1 => AttachFrame(numbersHandle, "numbers", Kinds[random.Next(Kinds.Length)], "int32", Proto.Role.Writer),
                2 => AttachFrame(numbersHandle, "numbers", "Any2One", ValueTypes[random.Next(ValueTypes.Length)], Proto.Role.Writer),
                3 => AttachFrame(numbersHandle, "numbers", "Any2One", "int32", (Proto.Role)random.Next(0, 6) is var r && r != Proto.Role.Writer ? r : Proto.Role.Reader),
                4 => AttachFrame(OtherHandle(), "gate", "Barrier", string.Empty, random.Next(2) == 0 ? Proto.Role.Writer : (Proto.Role)99),
                _ when _attached.Count > 0 => AttachFrame(_attached[random.Next(_attached.Count)], "pail", "Bucket", string.Empty, Proto.Role.Bucket), // handle in use (or reattached)
                _ => AttachFrame(OtherHandle(), "strings", "Any2Any", "string", Proto.Role.Barrier),
            };
        }

        private uint OtherHandle() => NumbersHandles + 1 + (uint)random.Next((int)OtherHandles);

        private Proto.ClientFrame AttachFrame(uint handle, string name, string kind, string valueType, Proto.Role role)
        {
            lock (_lock)
            {
                _attaching[handle] = _attaching.GetValueOrDefault(handle) + 1;
            }

            _attached.Add(handle);
            return new Proto.ClientFrame { Attach = new Proto.Attach { Handle = handle, Name = name, Kind = kind, ValueType = valueType, Role = role } };
        }

        /// <summary>A write on a "numbers" handle: a negative int32 (well-formed), a wrong length, or too large.</summary>
        private List<Proto.ClientFrame> WriteNumber(int handle)
        {
            byte[] data = random.Next(3) switch
            {
                0 => BitConverter.GetBytes(-1 - random.Next(int.MaxValue)),
                1 => Garbage(random, random.Next(2) == 0 ? random.Next(0, 4) : random.Next(5, (int)MaxValueSize + 1)),
                _ => Garbage(random, (int)MaxValueSize + 1 + random.Next(200)),
            };
            ulong op = ++_nextOp;
            if (data.Length == 4)
            {
                _numbers[op] = BitConverter.ToInt32(data);
            }

            return Value(new Proto.ClientFrame { Write = new Proto.Write { Handle = (uint)handle, OpId = op } }, op, data);
        }

        /// <summary>A write of any bytes on any handle: strings with bad presence bytes or UTF-8, wrong operations, unknown handles.</summary>
        private List<Proto.ClientFrame> WriteOther(uint handle)
        {
            if (handle is >= 1 and <= NumbersHandles)
            {
                handle += NumbersHandles; // never "numbers": random bytes of length 4 would decode
            }

            byte[] data = random.Next(3) == 0 ? [1, .. System.Text.Encoding.UTF8.GetBytes("value " + random.Next(100))] : Garbage(random, random.Next(0, 2 * (int)MaxValueSize));
            ulong op = ++_nextOp;
            return Value(new Proto.ClientFrame { Write = new Proto.Write { Handle = handle, OpId = op } }, op, data);
        }

        /// <summary>The value's chunks (split at random places), then the closing Write with the rest.</summary>
        private List<Proto.ClientFrame> Value(Proto.ClientFrame write, ulong op, byte[] data)
        {
            var frames = new List<Proto.ClientFrame>();
            int at = 0;
            while (at < data.Length && random.Next(3) == 0)
            {
                int length = random.Next(0, data.Length - at + 1);
                frames.Add(new Proto.ClientFrame { Chunk = new Proto.Chunk { OpId = op, Data = ByteString.CopyFrom(data, at, length) } });
                at += length;
            }

            write.Write.Data = ByteString.CopyFrom(data, at, data.Length - at);
            frames.Add(Expect(write, op));
            return frames;
        }

        /// <summary>A new operation with an op_id of its own.</summary>
        private Proto.ClientFrame Op(Proto.ClientFrame frame)
        {
            ulong op = ++_nextOp;
            switch (frame.BodyCase)
            {
                case Proto.ClientFrame.BodyOneofCase.Read: frame.Read.OpId = op; break;
                case Proto.ClientFrame.BodyOneofCase.Sync: frame.Sync.OpId = op; break;
                case Proto.ClientFrame.BodyOneofCase.Watch: frame.Watch.OpId = op; break;
                case Proto.ClientFrame.BodyOneofCase.Reserve: frame.Reserve.OpId = op; break;
                case Proto.ClientFrame.BodyOneofCase.Settle: frame.Settle.OpId = op; break;
            }

            return Expect(frame, op);
        }

        /// <summary>An operation reusing the op_id of an earlier one that may still be running.</summary>
        private List<Proto.ClientFrame> ReuseOpId()
        {
            ulong op;
            lock (_lock)
            {
                if (_pending.Count == 0)
                {
                    return [Op(new Proto.ClientFrame { Read = new Proto.Read { Handle = Handle() } })];
                }

                op = _pending.Keys.ElementAt(random.Next(_pending.Count));
            }

            _mayBreak = true;
            _numbers.Remove(op); // its answer no longer says which of the two it is
            return [Expect(new Proto.ClientFrame { Read = new Proto.Read { Handle = Handle(), OpId = op } }, op)];
        }

        private Proto.ClientFrame Expect(Proto.ClientFrame frame, ulong? op)
        {
            if (op is { } id)
            {
                lock (_lock)
                {
                    _pending[id] = _pending.GetValueOrDefault(id) + 1;
                }
            }

            return frame;
        }
    }
}
