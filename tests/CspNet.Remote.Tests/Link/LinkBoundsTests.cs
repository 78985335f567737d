using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// What one client can make a home hold is bounded: running operations and bytes of values per
/// stream (<see cref="CspNodeOptions.MaxOperationsPerLink"/>, <see cref="CspNodeOptions.MaxBytesPerLink"/>)
/// and ends per name (<see cref="CspNodeOptions.MaxEndsPerName"/>). An operation beyond a bound is
/// answered RESOURCE_EXHAUSTED, the stream serves on, and what was admitted completes exactly.
/// </summary>
public sealed class LinkBoundsTests
{
    private const int Timeout = 60_000;
    private const int ValueBytes = 300 << 10;

    [Fact(Timeout = Timeout)]
    public async Task Write_ValuesBeyondMaxBytesPerLink_RefusedWhileTheAdmittedOnesAreRead()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", LimitBytes);
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("big");
        await using var client = await RawClient.ConnectAsync(home);
        await client.AttachAsync(1, "big", "Any2One", "bytes", Proto.Role.Writer);

        // 1 MiB takes three values of 300 KiB; the fourth, fifth and sixth are refused at once.
        for (ulong op = 1; op <= 6; op++)
        {
            await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = op, Data = Encoded((byte)op) } });
        }

        for (int i = 0; i < 3; i++)
        {
            Proto.Completed refused = await client.NextCompletedAsync();
            Assert.Equal((Proto.Outcome.Error, StatusCode.ResourceExhausted), (refused.Outcome, (StatusCode)refused.Status));
            Assert.Contains("MaxBytesPerLink", refused.Message, StringComparison.Ordinal);
            Assert.InRange(refused.OpId, 4UL, 6UL);
        }

        // A value read frees its bytes: the next write is admitted, and every admitted value is read once.
        Assert.Equal(1, (await input.ReadAsync())[0]);
        Assert.Equal(1UL, (await client.NextCompletedAsync()).OpId);
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 7, Data = Encoded(7) } });
        var read = new List<byte>();
        for (int i = 0; i < 3; i++)
        {
            read.Add((await input.ReadAsync())[0]);
        }

        Assert.Equal([2, 3, 7], read.Order().Select(v => (int)v));
        var completed = new List<(ulong, Proto.Outcome)>();
        for (int i = 0; i < 3; i++)
        {
            Proto.Completed done = await client.NextCompletedAsync();
            completed.Add((done.OpId, done.Outcome));
        }

        Assert.Equal([(2UL, Proto.Outcome.Ok), (3UL, Proto.Outcome.Ok), (7UL, Proto.Outcome.Ok)], completed.Order());
        Assert.Equal(StatusCode.OK, await client.CloseAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task Read_OperationsBeyondMaxOperationsPerLink_RefusedAndTheStreamServesOn()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => o.MaxOperationsPerLink = 4);
        AltingChannelOut<int> output = await home.GetAny2AnyOutAsync<int>("work");
        await using var client = await RawClient.ConnectAsync(home);
        await client.AttachAsync(1, "work", "Any2Any", "int32", Proto.Role.Reader);

        for (ulong op = 1; op <= 6; op++)
        {
            await client.SendAsync(new Proto.ClientFrame { Read = new Proto.Read { Handle = 1, OpId = op } });
        }

        for (int i = 0; i < 2; i++)
        {
            Proto.Completed refused = await client.NextCompletedAsync();
            Assert.Equal((Proto.Outcome.Error, StatusCode.ResourceExhausted), (refused.Outcome, (StatusCode)refused.Status));
            Assert.Contains("MaxOperationsPerLink", refused.Message, StringComparison.Ordinal);
            Assert.InRange(refused.OpId, 5UL, 6UL);
        }

        // The four running reads take four values; then there is room for a fifth.
        for (int value = 0; value < 4; value++)
        {
            await output.WriteAsync(value);
            Assert.Equal(Proto.Outcome.Ok, (await client.NextCompletedAsync()).Outcome);
        }

        await client.SendAsync(new Proto.ClientFrame { Read = new Proto.Read { Handle = 1, OpId = 7 } });
        await output.WriteAsync(4);
        Proto.Completed seventh = await client.NextCompletedAsync();
        Assert.Equal((7UL, Proto.Outcome.Ok), (seventh.OpId, seventh.Outcome));
        Assert.Equal(StatusCode.OK, await client.CloseAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task Attach_EndsBeyondMaxEndsPerName_RefusedUntilAnEndGoes()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => o.MaxEndsPerName = 3);
        _ = await home.GetAny2AnyOutAsync<int>("work");
        await using var first = await RawClient.ConnectAsync(home);
        await using var second = await RawClient.ConnectAsync(home);
        for (uint handle = 1; handle <= 3; handle++)
        {
            Assert.Equal(StatusCode.OK, (StatusCode)(await first.AttachAsync(handle, "work", "Any2Any", "int32", Proto.Role.Reader)).Status);
        }

        // The bound is the name's, whichever stream asks.
        Proto.Attached refused = await second.AttachAsync(1, "work", "Any2Any", "int32", Proto.Role.Reader);
        Assert.Equal(StatusCode.ResourceExhausted, (StatusCode)refused.Status);
        Assert.Contains("MaxEndsPerName", refused.Message, StringComparison.Ordinal);

        // A Detach gives a place back, and so does a stream that ends.
        await first.SendAsync(new Proto.ClientFrame { Detach = new Proto.Detach { Handle = 1 } });
        await first.AttachAsync(9, "nowhere", "Any2Any", "int32", Proto.Role.Reader); // answered after the Detach: it has been done
        Assert.Equal(StatusCode.OK, (StatusCode)(await second.AttachAsync(2, "work", "Any2Any", "int32", Proto.Role.Reader)).Status);
        Assert.Equal(StatusCode.ResourceExhausted, (StatusCode)(await second.AttachAsync(3, "work", "Any2Any", "int32", Proto.Role.Reader)).Status);
        Assert.Equal(StatusCode.OK, await first.CloseAsync());
        for (uint handle = 4; handle <= 5; handle++)
        {
            Assert.Equal(StatusCode.OK, (StatusCode)(await second.AttachAsync(handle, "work", "Any2Any", "int32", Proto.Role.Reader)).Status);
        }

        Assert.Equal(StatusCode.OK, await second.CloseAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task Chunk_MoreThanMaxBytesPerLinkInAssembly_EndsThatStreamOnly()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", LimitBytes);
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("big");
        await using var hoarder = await RawClient.ConnectAsync(home);
        await hoarder.AttachAsync(1, "big", "Any2One", "bytes", Proto.Role.Writer);

        // Parts of four values whose Writes never come: the fourth goes past 1 MiB.
        for (ulong op = 1; op <= 4; op++)
        {
            await hoarder.SendAsync(new Proto.ClientFrame { Chunk = new Proto.Chunk { OpId = op, Data = Encoded((byte)op) } });
        }

        StatusCode ended = await hoarder.CloseAsync();
        Assert.Equal(StatusCode.ResourceExhausted, ended);

        // Another program writes through the same home.
        CspNode writer = await system.NodeAsync("writer");
        AltingChannelOut<byte[]> output = await writer.GetAny2OneOutAsync<byte[]>("big");
        Task written = output.WriteAsync(new byte[ValueBytes]).AsTask();
        Assert.Equal(ValueBytes, (await input.ReadAsync()).Length);
        await written;
    }

    [Theory(Timeout = Timeout)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task WriteAsync_ConcurrentWritesBeyondMaxBytesPerLink_ExcessFailsAndNothingRefusedIsRead(bool bulkLane)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", LimitBytes);
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("big");
        CspNode writer = await system.NodeAsync("writer", o => o.BulkLane = bulkLane);
        AltingChannelOut<byte[]> output = await writer.GetAny2OneOutAsync<byte[]>("big");

        List<Task<Exception?>> writes = [.. Enumerable.Range(1, 6).Select(i => OutcomeAsync(output.WriteAsync(Value((byte)i))))];

        // Three fit in 1 MiB and wait for the reader; the other three fail at once, saying which limit.
        List<Task<Exception?>> waiting = [.. writes];
        for (int i = 0; i < 3; i++)
        {
            Task<Exception?> first = await Task.WhenAny(waiting);
            waiting.Remove(first);
            InvalidOperationException refused = Assert.IsType<InvalidOperationException>(await first);
            Assert.Contains("MaxBytesPerLink", refused.Message, StringComparison.Ordinal);
        }

        var read = new List<int>();
        for (int i = 0; i < 3; i++)
        {
            read.Add((await input.ReadAsync())[0]);
        }

        Assert.All(await Task.WhenAll(waiting), Assert.Null);
        Assert.Equal(waiting.Select(w => writes.IndexOf(w) + 1).Order(), read.Order());

        // Nothing refused slipped into the channel: the next value read is the one written next.
        Task last = output.WriteAsync([0xFF]).AsTask();
        Assert.Equal([0xFF], await input.ReadAsync());
        await last;
    }

    private static async Task<Exception?> OutcomeAsync(ValueTask write)
    {
        try
        {
            await write;
            return null;
        }
        catch (InvalidOperationException e)
        {
            return e;
        }
    }

    private static void LimitBytes(CspNodeOptions options)
    {
        options.MaxBytesPerLink = 1 << 20;
        options.MaxValueSize = 512 << 10;
    }

    private static byte[] Value(byte first)
    {
        byte[] value = new byte[ValueBytes];
        value[0] = first;
        return value;
    }

    // The "bytes" encoding: a presence byte, then the bytes.
    private static ByteString Encoded(byte first) => ByteString.CopyFrom([1, .. Value(first)]);

    /// <summary>A Link stream driven frame by frame, as a client that speaks only link.proto would.</summary>
    internal sealed class RawClient : IAsyncDisposable
    {
        private readonly Grpc.Net.Client.GrpcChannel _channel;
        private readonly AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> _call;

        private RawClient(Grpc.Net.Client.GrpcChannel channel)
        {
            _channel = channel;
            _call = new Proto.Link.LinkClient(channel).Connect();
        }

        internal static async Task<RawClient> ConnectAsync(CspNode home)
        {
            var client = new RawClient(UserKey.Channel($"http://127.0.0.1:{home.Port}"));
            await client.SendAsync(new Proto.ClientFrame { Hello = new Proto.Hello { ProtocolVersion = 1, Program = "raw client" } });
            Assert.Equal(Proto.HomeFrame.BodyOneofCase.Hello, (await client.NextAsync()).BodyCase);
            return client;
        }

        internal Task SendAsync(Proto.ClientFrame frame) => _call.RequestStream.WriteAsync(frame);

        internal async Task<Proto.Attached> AttachAsync(uint handle, string name, string kind, string valueType, Proto.Role role)
        {
            await SendAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = handle, Name = name, Kind = kind, ValueType = valueType, Role = role } });
            Proto.HomeFrame frame = await NextAsync();
            Assert.Equal(Proto.HomeFrame.BodyOneofCase.Attached, frame.BodyCase);
            return frame.Attached;
        }

        internal async Task<Proto.Completed> NextCompletedAsync()
        {
            Proto.HomeFrame frame = await NextAsync();
            Assert.Equal(Proto.HomeFrame.BodyOneofCase.Completed, frame.BodyCase);
            return frame.Completed;
        }

        /// <summary>Ends the client's side and reads to the end: the stream's final status.</summary>
        internal async Task<StatusCode> CloseAsync()
        {
            try
            {
                await _call.RequestStream.CompleteAsync();
                while (await _call.ResponseStream.MoveNext(CancellationToken.None))
                {
                }

                return _call.GetStatus().StatusCode;
            }
            catch (RpcException e)
            {
                return e.StatusCode;
            }
        }

        public ValueTask DisposeAsync()
        {
            _call.Dispose();
            _channel.Dispose();
            return ValueTask.CompletedTask;
        }

        private async Task<Proto.HomeFrame> NextAsync()
        {
            Assert.True(await _call.ResponseStream.MoveNext(CancellationToken.None), "the home ended the stream");
            return _call.ResponseStream.Current;
        }
    }
}
