using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// Values large enough to be received into pooled arrays (see LinkMarshaller), in chunks and in
/// one frame, through every path that receives one: a remote write at the home, a remote read's
/// answer and a remote selecting reader's reservation at the client. Each value is checked byte for
/// byte, round after round, so an array returned to the pool while still in use (and refilled by
/// the next frame) would show as a corrupt value.
/// </summary>
public sealed class LargeValueTests
{
    private const int ChunkSize = 64 << 10;

    // One pooled frame; a full chunk and a one-byte Write; several chunks and a pooled last part.
    private static readonly int[] Sizes = [20_000, ChunkSize, 300_000];

    [Fact(Timeout = 60_000)]
    public async Task LargeValues_WrittenReadAndSelectedAcrossALink_ArriveIntact()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host", o => o.ChunkSize = ChunkSize);
        CspNode user = await system.NodeAsync("user", o => o.ChunkSize = ChunkSize);
        AltingChannelIn<byte[]> hostIn = await host.GetOne2OneInAsync<byte[]>("to-host");
        AltingChannelOut<byte[]> userOut = await user.GetOne2OneOutAsync<byte[]>("to-host");
        AltingChannelOut<byte[]> hostOut = await host.GetOne2AnyOutAsync<byte[]>("to-user");
        AltingChannelIn<byte[]> userIn = await user.GetOne2AnyInAsync<byte[]>("to-user");
        var select = new Alternative([userIn]);
        var random = new Random(7);

        for (int round = 0; round < 4; round++)
        {
            foreach (int size in Sizes)
            {
                byte[] value = new byte[size];
                random.NextBytes(value);

                Task write = userOut.WriteAsync(value).AsTask();
                Assert.Equal(value, await hostIn.ReadAsync());
                await write;

                write = hostOut.WriteAsync(value).AsTask();
                Assert.Equal(value, await userIn.ReadAsync());
                await write;

                write = hostOut.WriteAsync(value).AsTask();
                Assert.Equal(0, await select.PriSelectAsync());
                Assert.Equal(value, await userIn.ReadAsync());
                await write;
            }
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task RawStream_LargeFramesForUnknownOversizedAndAbandonedValues_AnsweredAndTheValidOneDelivered()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o =>
        {
            o.ChunkSize = ChunkSize;
            o.MaxValueSize = 100_000;
        });
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("big");
        byte[] value = new byte[50_000];
        new Random(3).NextBytes(value);
        byte[] encoded = [1, .. value]; // the "bytes" encoding: a presence byte, then the bytes
        ByteString part = ByteString.CopyFrom(value, 0, 40_000);
        Task<byte[]> read = input.ReadAsync().AsTask();

        using var channel = UserKey.Channel($"http://127.0.0.1:{home.Port}");
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = new Proto.Link.LinkClient(channel).Connect();
        Proto.ClientFrame[] frames =
        [
            new() { Hello = new Proto.Hello { ProtocolVersion = 1 } },
            new() { Attach = new Proto.Attach { Handle = 1, Name = "big", Kind = "Any2One", ValueType = "bytes", Role = Proto.Role.Writer } },
            new() { Chunk = new Proto.Chunk { OpId = 1, Data = part } },                     // to a handle never attached
            new() { Write = new Proto.Write { Handle = 9, OpId = 1, Data = part } },
            new() { Chunk = new Proto.Chunk { OpId = 2, Data = part } },                     // 120,000 bytes: too large
            new() { Chunk = new Proto.Chunk { OpId = 2, Data = part } },
            new() { Chunk = new Proto.Chunk { OpId = 2, Data = part } },
            new() { Write = new Proto.Write { Handle = 1, OpId = 2, Data = part } },
            new() { Chunk = new Proto.Chunk { OpId = 4, Data = part } },                     // never closed: released with the stream
            new() { Chunk = new Proto.Chunk { OpId = 3, Data = ByteString.CopyFrom(encoded, 0, 25_000) } },
            new() { Write = new Proto.Write { Handle = 1, OpId = 3, Data = ByteString.CopyFrom(encoded, 25_000, encoded.Length - 25_000) } },
        ];
        foreach (Proto.ClientFrame frame in frames)
        {
            await call.RequestStream.WriteAsync(frame);
        }

        var outcomes = new Dictionary<ulong, (Proto.Outcome, StatusCode)>();
        while (outcomes.Count < 3 && await call.ResponseStream.MoveNext(CancellationToken.None))
        {
            if (call.ResponseStream.Current.Completed is { } completed)
            {
                outcomes.Add(completed.OpId, (completed.Outcome, (StatusCode)completed.Status));
            }
        }

        await call.RequestStream.CompleteAsync();
        while (await call.ResponseStream.MoveNext(CancellationToken.None))
        {
        }

        Assert.Equal((Proto.Outcome.Error, StatusCode.NotFound), outcomes[1]);
        Assert.Equal((Proto.Outcome.Error, StatusCode.ResourceExhausted), outcomes[2]);
        Assert.Equal((Proto.Outcome.Ok, StatusCode.OK), outcomes[3]);
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode);
        Assert.Equal(value, await read);
    }
}
