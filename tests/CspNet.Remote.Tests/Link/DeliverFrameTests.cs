using System.Buffers.Binary;
using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// Deliver frames (link.proto: the value of a writing end's chosen offer) sent by a raw client
/// that gets them wrong: each mistake is answered on its own operation, nothing is placed twice,
/// a value the home cannot decode poisons the channel saying why, and the stream serves on.
/// </summary>
public sealed class DeliverFrameTests
{
    [Fact(Timeout = 60_000)]
    public async Task RawStream_MalformedDeliverFrames_AnsweredPerOperationAndTheStreamServesOn()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<int> guarded = await home.GetAny2OneInAsync<int>("guarded");
        AltingChannelIn<int> after = await home.GetAny2OneInAsync<int>("after");

        using var channel = UserKey.Channel($"http://127.0.0.1:{home.Port}");
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = new Proto.Link.LinkClient(channel).Connect();
        var frames = new FrameReader(call.ResponseStream);
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Hello = new Proto.Hello { ProtocolVersion = 1 } });
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 1, Name = "guarded", Kind = "Any2One", ValueType = "int32", Role = Proto.Role.Writer } });
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 2, Name = "after", Kind = "Any2One", ValueType = "int32", Role = Proto.Role.Writer } });

        // A Deliver for an operation that was never started: FAILED_PRECONDITION, nothing placed.
        await call.RequestStream.WriteAsync(Deliver(50, Int32(-1)));
        Proto.Completed unknown = await frames.CompletedAsync(50);
        Assert.Equal((Proto.Outcome.Error, StatusCode.FailedPrecondition), (unknown.Outcome, (StatusCode)unknown.Status));

        // A reservation that set a parked reader aside, delivered once: the reader has the value.
        Task<int> first = guarded.ReadAsync().AsTask();
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Reserve = new Proto.Reserve { Handle = 1, OpId = 3, Wait = true } });
        await frames.ReservedAsync(3);
        await call.RequestStream.WriteAsync(Deliver(3, Int32(42)));
        Assert.Equal(Proto.Outcome.Ok, (await frames.CompletedAsync(3)).Outcome);
        Assert.Equal(42, await first);

        // The same Deliver again: the reservation is over, so nothing is placed a second time.
        await call.RequestStream.WriteAsync(Deliver(3, Int32(43)));
        Proto.Completed again = await frames.CompletedAsync(3);
        Assert.Equal((Proto.Outcome.Error, StatusCode.FailedPrecondition), (again.Outcome, (StatusCode)again.Status));
        Task<int> second = guarded.ReadAsync().AsTask();
        Assert.False(second.IsCompleted);

        // A value that cannot be decoded (3 bytes for an int32) after the selection chose it: the
        // channel is poisoned, saying why, and the waiting reader is told.
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Reserve = new Proto.Reserve { Handle = 1, OpId = 4, Wait = true } });
        await frames.ReservedAsync(4);
        await call.RequestStream.WriteAsync(Deliver(4, ByteString.CopyFrom(1, 2, 3)));
        await frames.CompletedAsync(4);
        PoisonException poisoned = await Assert.ThrowsAsync<PoisonException>(() => second);
        Assert.Contains("could not be placed", poisoned.Message, StringComparison.Ordinal);

        // The stream serves on: a plain write to another channel completes.
        Task<int> third = after.ReadAsync().AsTask();
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 2, OpId = 5, Data = Int32(7) } });
        Assert.Equal(Proto.Outcome.Ok, (await frames.CompletedAsync(5)).Outcome);
        Assert.Equal(7, await third);

        await call.RequestStream.CompleteAsync();
        await frames.DrainAsync();
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode);
    }

    private static Proto.ClientFrame Deliver(ulong opId, ByteString data) => new() { Deliver = new Proto.Deliver { OpId = opId, Data = data } };

    private static ByteString Int32(int value)
    {
        byte[] bytes = new byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(bytes, value);
        return ByteString.CopyFrom(bytes);
    }

    /// <summary>Reads the home's frames in order, skipping those the test does not wait for.</summary>
    private sealed class FrameReader(IAsyncStreamReader<Proto.HomeFrame> stream)
    {
        internal async Task<Proto.Completed> CompletedAsync(ulong opId) =>
            (await NextAsync(f => f.Completed is { } c && c.OpId == opId, $"Completed({opId})")).Completed;

        internal async Task ReservedAsync(ulong opId)
        {
            Proto.HomeFrame frame = await NextAsync(f => (f.Reserved is { } r && r.OpId == opId) || (f.Completed is { } c && c.OpId == opId), $"Reserved({opId})");
            Assert.True(frame.Reserved is not null, $"Reservation {opId} ended instead: {frame.Completed}");
        }

        internal async Task DrainAsync()
        {
            while (await stream.MoveNext(CancellationToken.None))
            {
            }
        }

        private async Task<Proto.HomeFrame> NextAsync(Func<Proto.HomeFrame, bool> wanted, string what)
        {
            while (await stream.MoveNext(CancellationToken.None))
            {
                if (wanted(stream.Current))
                {
                    return stream.Current;
                }
            }

            throw new InvalidOperationException($"The stream ended before {what}.");
        }
    }
}
