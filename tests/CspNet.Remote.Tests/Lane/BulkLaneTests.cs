using System.Buffers.Binary;
using System.Net.Sockets;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Lane;

/// <summary>
/// The bulk lane between two programs on this host: large values arrive intact on it, a lane that
/// fails or is fed garbage costs no value and no duplicate, and a lane is opened only by the Link
/// stream it belongs to. Tests that speak the wire directly play a client against a real home.
/// </summary>
public sealed class BulkLaneTests
{
    private const int Threshold = 32 << 10;

    [LaneFact(Timeout = 60_000)]
    public async Task Write_LargeValuesBetweenProgramsOnOneHost_TravelOnTheLaneIntactAndInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync<byte[]>("lane-values");
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("lane-values");
        var random = new Random(11);

        foreach (int size in new[] { Threshold, 1 << 20, 10, 3 << 20, Threshold - 1 })
        {
            byte[] value = new byte[size];
            random.NextBytes(value);
            Task write = output.WriteAsync(value).AsTask();
            Assert.Equal(value, await input.ReadAsync());
            await write;
        }

        Assert.True(((RemoteChannelOut<byte[]>)output).Link.HasLane);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task Write_BufferedChannelStreamOfLargeValues_EveryValueArrivesOnceInOrder()
    {
        // A buffered channel's first writes wait for the home (no credits yet), later ones spend
        // credits: the two kinds must keep the writer's order between them.
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync("lane-stream", new FifoBuffer<byte[]>(8));
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("lane-stream");
        const int Count = 40;

        Task writing = Task.Run(async () =>
        {
            for (int i = 0; i < Count; i++)
            {
                byte[] value = new byte[1 << 20];
                value[0] = (byte)i;
                value[^1] = (byte)i;
                await output.WriteAsync(value);
            }
        });
        for (int i = 0; i < Count; i++)
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal((byte)i, value[0]);
            Assert.Equal((byte)i, value[^1]);
        }

        await writing;
    }

    [LaneFact(Timeout = 60_000)]
    public async Task Write_BufferedStreamOfSmallAndLargeValues_EveryValueArrivesOnceInOrder()
    {
        // Credited values at or above the threshold go on the lane, smaller ones on the link: the
        // home must still hand them to the channel in the order written.
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync("mixed-stream", new FifoBuffer<byte[]>(8));
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("mixed-stream");

        Task writing = WriteMixedStreamAsync(output, MixedCount);
        await ReadMixedStreamAsync(input, 0, MixedCount);
        await writing;

        Assert.True(((RemoteChannelOut<byte[]>)output).Link.CreditedLaneWrites > 0, "No credited value went on the lane.");
    }

    [LaneFact(Timeout = 60_000)]
    public async Task Write_LaneDroppedDuringBufferedStream_EveryValueArrivesOnceInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync("dropped-stream", new FifoBuffer<byte[]>(8));
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("dropped-stream");

        // The buffer is full and credited lane values are on their way when the lane goes.
        Task writing = WriteMixedStreamAsync(output, MixedCount);
        await ReadMixedStreamAsync(input, 0, MixedCount / 3);
        await ((BulkLaneHost)host.Lanes!).DropConnectionsAsync();
        await ReadMixedStreamAsync(input, MixedCount / 3, MixedCount);
        await writing;

        Assert.True(((RemoteChannelOut<byte[]>)output).Link.CreditedLaneWrites > 0, "No credited value went on the lane.");
        Assert.False(((RemoteChannelOut<byte[]>)output).Link.HasLane);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task DisposeAsync_NodeWithALane_RemovesItsSocketDirectory()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        string directory = Path.GetDirectoryName(host.Lanes!.SocketPath)!;
        Assert.True(Directory.Exists(directory));

        await host.DisposeAsync();

        Assert.False(Directory.Exists(directory));
    }

    [LaneFact(Timeout = 60_000)]
    public async Task StartAsync_LaneDirectoryLeftByAProgramThatIsGone_IsRemoved()
    {
        // A process id no process can have: the program that made it was killed before it cleaned up.
        string leftBehind = Path.Combine(Path.GetTempPath(), $"cspnet-lane-{int.MaxValue}-0123456789abcdef01234567");
        Directory.CreateDirectory(leftBehind);
        await File.WriteAllTextAsync(Path.Combine(leftBehind, "lane.sock"), string.Empty);

        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");

        Assert.False(Directory.Exists(leftBehind));
        Assert.True(Directory.Exists(Path.GetDirectoryName(host.Lanes!.SocketPath)));
    }

    internal const int MixedCount = 120;

    /// <summary>The size of value <paramref name="index"/> of a mixed stream: runs of small and large ones.</summary>
    private static int MixedSize(int index) => (index % 7) switch
    {
        0 or 1 => 16,
        2 => 1_000,
        3 => Threshold,
        4 => 300_000,
        5 => 20,
        _ => 1 << 20,
    };

    internal static async Task WriteMixedStreamAsync(IChannelOut<byte[]> output, int count)
    {
        await Task.Yield();
        for (int i = 0; i < count; i++)
        {
            byte[] value = new byte[MixedSize(i)];
            Array.Fill(value, (byte)i);
            BinaryPrimitives.WriteInt32LittleEndian(value, i);
            await output.WriteAsync(value);
        }
    }

    internal static async Task ReadMixedStreamAsync(AltingChannelIn<byte[]> input, int from, int to)
    {
        for (int i = from; i < to; i++)
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal(i, BinaryPrimitives.ReadInt32LittleEndian(value));
            Assert.Equal(MixedSize(i), value.Length);
            Assert.Equal((byte)i, value[^1]);
        }
    }

    [LaneFact(Timeout = 60_000)]
    public async Task Write_LaneDroppedByTheHome_EachValueArrivesOnceOnTheLink()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync<byte[]>("dropped-lane");
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("dropped-lane");
        byte[][] values = [.. Enumerable.Range(1, 6).Select(i => Enumerable.Repeat((byte)i, 200_000).ToArray())];

        // Writes in flight while the lane goes: the first is taken before, the others after.
        Task writes = Task.Run(async () =>
        {
            foreach (byte[] value in values)
            {
                await output.WriteAsync(value);
            }

            await output.WriteAsync([0]);
        });
        Assert.Equal(values[0], await input.ReadAsync());
        await ((BulkLaneHost)host.Lanes!).DropConnectionsAsync();

        foreach (byte[] value in values.Skip(1))
        {
            Assert.Equal(value, await input.ReadAsync());
        }

        Assert.Equal([0], await input.ReadAsync()); // nothing duplicated before the last, small value
        await writes;
        Assert.False(((RemoteChannelOut<byte[]>)output).Link.HasLane);
    }

    [Fact(Timeout = 60_000)]
    public async Task Connect_HomeWithTheLaneOff_RefusesItAndValuesTravelOnTheLink()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host", o => o.BulkLane = false);
        CspNode user = await system.NodeAsync("user", o => o.BulkLane = true);
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync<byte[]>("no-lane");
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("no-lane");
        byte[] value = new byte[1 << 20];
        new Random(5).NextBytes(value);

        Task write = output.WriteAsync(value).AsTask();
        Assert.Equal(value, await input.ReadAsync());
        await write;

        Assert.Null(host.Lanes);
        Assert.False(((RemoteChannelOut<byte[]>)output).Link.HasLane);
    }

    [Fact(Timeout = 60_000)]
    public async Task RawHello_ClientThatDoesNotOfferTheLane_GetsNoLane()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        await using var client = await RawClient.StartAsync(home, offerLane: false);

        Assert.Equal(string.Empty, client.Hello.LanePath);
        Assert.True(client.Hello.LaneSecret.IsEmpty);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawLane_CutInTheMiddleOfAValue_WriteAbortedNothingDeliveredAndTheLinkStillWrites()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("cut");
        await using var client = await RawClient.StartAsync(home, offerLane: true);
        await client.AttachWriterAsync("cut");

        using (Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory))
        {
            byte[] header = Header(opId: 1, length: 100_000);
            await lane.SendAsync(header);
            await lane.SendAsync(new byte[50_000]);
            await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Lane = true } });
        }

        Proto.Completed aborted = await client.CompletedAsync();
        Assert.Equal((1ul, Proto.Outcome.Error, StatusCode.Aborted), (aborted.OpId, aborted.Outcome, (StatusCode)aborted.Status));

        // The client sends the value again on the link: it is the only one the reader gets.
        byte[] value = [1, .. new byte[100_000 - 1]];
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 2, Data = ByteString.CopyFrom(value) } });
        Task<byte[]> read = input.ReadAsync().AsTask();
        Assert.Equal(value.AsSpan(1).ToArray(), await read);
        Assert.Equal((2ul, Proto.Outcome.Ok), await client.CompletedAsync() is var ok ? (ok.OpId, ok.Outcome) : default);
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // no second value waits
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawLane_ClosedRightAfterWholePayloads_EachIsDeliveredFromTheLane()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("closing");
        await using var client = await RawClient.StartAsync(home, offerLane: true);
        await client.AttachWriterAsync("closing");

        // Eight whole payloads and the end of the connection, all sent before any Write frame: the
        // home must read what arrived before it learnt that the client closed its side.
        const int Count = 8;
        var burst = new List<byte>();
        for (ulong op = 1; op <= Count; op++)
        {
            burst.AddRange(Header(op, 40_001));
            burst.Add(1);
            burst.AddRange(Enumerable.Repeat((byte)op, 40_000));
        }

        using (Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory))
        {
            await lane.SendAsync(burst.ToArray());
            lane.Shutdown(SocketShutdown.Send);
        }

        for (ulong op = 1; op <= Count; op++)
        {
            await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = op, Lane = true } });
        }

        for (ulong op = 1; op <= Count; op++)
        {
            Task<byte[]> read = input.ReadAsync().AsTask();
            Proto.Completed completed = await client.CompletedAsync();
            Assert.True(completed.OpId == op && completed.Outcome == Proto.Outcome.Ok, $"op {completed.OpId}: {completed.Outcome} {completed.Status} {completed.Message}"); // not ABORTED: the lane brought it
            Assert.Equal(Enumerable.Repeat((byte)op, 40_000), await read);
        }
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawLane_CorruptFrame_ConnectionDroppedAndTheHomeKeepsServingLanes()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => o.MaxValueSize = 1 << 20);
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("corrupt");
        await using var first = await RawClient.StartAsync(home, offerLane: true);
        await first.AttachWriterAsync("corrupt");

        using (Socket lane = await first.OpenLaneAsync(first.Hello.LaneSecret.Memory))
        {
            await lane.SendAsync(Header(opId: 1, length: uint.MaxValue)); // longer than any value allowed
            await first.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Lane = true } });
            await RawClient.AssertLaneClosedAsync(lane); // the home closed it
        }

        Proto.Completed aborted = await first.CompletedAsync();
        Assert.Equal((Proto.Outcome.Error, StatusCode.Aborted), (aborted.Outcome, (StatusCode)aborted.Status));

        // Another stream's lane works: the home kept serving.
        await using var second = await RawClient.StartAsync(home, offerLane: true);
        await second.AttachWriterAsync("corrupt");
        byte[] encoded = [1, .. Enumerable.Repeat((byte)7, 40_000)];
        using Socket good = await second.OpenLaneAsync(second.Hello.LaneSecret.Memory);
        await good.SendAsync(Header(opId: 5, length: (uint)encoded.Length));
        await good.SendAsync(encoded);
        await second.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 5, Lane = true } });
        Assert.Equal(encoded.AsSpan(1).ToArray(), await input.ReadAsync());
        Assert.Equal(Proto.Outcome.Ok, (await second.CompletedAsync()).Outcome);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawLane_StrangerWithoutTheSecret_RefusedAndNothingDelivered()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("guarded");
        await using var client = await RawClient.StartAsync(home, offerLane: true);
        await client.AttachWriterAsync("guarded");

        byte[] guess = new byte[32];
        new Random(1).NextBytes(guess);
        using (Socket stranger = await client.OpenLaneAsync(guess))
        {
            await stranger.SendAsync(Header(opId: 1, length: 3));
            await stranger.SendAsync(new byte[] { 1, 2, 3 });
            await RawClient.AssertLaneClosedAsync(stranger); // closed without a word
        }

        // The stream's own Write for that op finds no payload: answered, nothing written.
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Lane = true } });
        Proto.Completed answer = await client.CompletedAsync();
        Assert.Equal((Proto.Outcome.Error, StatusCode.Aborted), (answer.Outcome, (StatusCode)answer.Status));
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // no second value waits
    }

    internal static byte[] Header(ulong opId, uint length)
    {
        byte[] header = new byte[12];
        BinaryPrimitives.WriteUInt64LittleEndian(header, opId);
        BinaryPrimitives.WriteUInt32LittleEndian(header.AsSpan(8), length);
        return header;
    }

    /// <summary>A Link stream spoken frame by frame, as another implementation would.</summary>
    internal sealed class RawClient : IAsyncDisposable
    {
        /// <summary>
        /// Asserts that the home closed the lane connection: the end of the stream, or a reset (a
        /// socket closed with bytes it had not read is reset by the kernel).
        /// </summary>
        /// <summary>Returns once the home has closed or reset the connection, reading what it sends before that (a TLS alert at most); the test's timeout fails it otherwise.</summary>
        internal static async Task ClosedByTheHomeAsync(Socket socket)
        {
            byte[] buffer = new byte[256];
            try
            {
                while (await socket.ReceiveAsync(buffer) > 0)
                {
                    // A TLS alert at most.
                }
            }
            catch (SocketException)
            {
                // Reset: closed as well.
            }
        }

        internal static async Task AssertLaneClosedAsync(Socket lane)
        {
            try
            {
                Assert.Equal(0, await lane.ReceiveAsync(new byte[1]));
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
            {
                // Closed with the test's bytes unread.
            }
        }

        private readonly Grpc.Net.Client.GrpcChannel _channel;
        private readonly AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> _call;

        private RawClient(Grpc.Net.Client.GrpcChannel channel)
        {
            _channel = channel;
            _call = new Proto.Link.LinkClient(channel).Connect();
        }

        internal Proto.Hello Hello { get; private set; } = new();

        internal static async Task<RawClient> StartAsync(CspNode home, bool offerLane, bool writeCredits = false, bool lanePlaced = false, bool laneBytes = false)
        {
            var client = new RawClient(UserKey.Channel($"http://127.0.0.1:{home.Port}"));
            await client.SendAsync(new Proto.ClientFrame { Hello = new Proto.Hello { ProtocolVersion = 1, Program = "raw", BulkLane = offerLane, WriteCredits = writeCredits, LanePlaced = lanePlaced, LaneBytes = laneBytes } });
            client.Hello = (await client.NextAsync()).Hello;
            return client;
        }

        internal async Task AttachWriterAsync(string name)
        {
            await SendAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 1, Name = name, Kind = "Any2One", ValueType = "bytes", Role = Proto.Role.Writer } });
            Assert.Equal(0, (await NextAsync()).Attached.Status);
        }

        internal async Task<Socket> OpenLaneAsync(ReadOnlyMemory<byte> secret)
        {
            var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            await socket.ConnectAsync(new UnixDomainSocketEndPoint(Hello.LanePath));
            await socket.SendAsync(secret);
            return socket;
        }

        /// <summary>Opens the home's TCP lane on 127.0.0.1 in clear text and presents <paramref name="secret"/>.</summary>
        internal async Task<Socket> OpenTcpLaneAsync(ReadOnlyMemory<byte> secret)
        {
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
            await socket.ConnectAsync("127.0.0.1", (int)Hello.LanePort);
            await socket.SendAsync(secret);
            return socket;
        }

        internal Task SendAsync(Proto.ClientFrame frame) => _call.RequestStream.WriteAsync(frame);

        internal async Task<Proto.Completed> CompletedAsync()
        {
            Proto.HomeFrame frame;
            do
            {
                frame = await NextAsync();
            }
            while (frame.Completed is null);
            return frame.Completed;
        }

        internal async Task<Proto.HomeFrame> NextAsync()
        {
            Assert.True(await _call.ResponseStream.MoveNext(CancellationToken.None), "the home ended the stream");
            return _call.ResponseStream.Current;
        }

        public async ValueTask DisposeAsync()
        {
            await _call.RequestStream.CompleteAsync();
            while (await _call.ResponseStream.MoveNext(CancellationToken.None))
            {
            }

            _call.Dispose();
            _channel.Dispose();
        }
    }
}
