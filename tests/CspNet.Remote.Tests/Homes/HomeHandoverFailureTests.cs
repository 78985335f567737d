using CspNet.Remote.Internal.Client;
using CspNet.Remote.Tests.Named;
using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Homes;

/// <summary>
/// A leaving home whose channel no program takes over (docs/DISTRIBUTED.md, "A moving home"): the
/// program offered it dies on the offer, or names no live program. A raw Link client plays that
/// program. The channel is poisoned, saying why, the operations held back are answered POISONED,
/// and the home leaves within the bound: never a silent loss, never a hang.
/// </summary>
public sealed class HomeHandoverFailureTests
{
    [Fact(Timeout = 60_000)]
    public async Task Leave_TakerNamesNoLiveProgram_HeldReadAnsweredPoisoned()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<int> local = await home.GetAny2AnyInAsync<int>("orphan");
        using var channel = UserKey.Channel($"http://127.0.0.1:{home.Port}");
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = await AttachReaderAsync(channel, "orphan");
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Read = new Proto.Read { Handle = 1, OpId = 7 } });

        Task leaving = home.DisposeAsync().AsTask();
        Proto.Handover offer = (await NextAsync(call, f => f.Handover is not null)).Handover;
        Assert.Equal(("orphan", "int32", false), (offer.Name, offer.ValueType, offer.Poisoned));
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Taken = new Proto.HomeTaken { Name = "orphan", Incarnation = "0123456789abcdef0123456789abcdef" } });

        Proto.Completed read = (await NextAsync(call, f => f.Completed is { OpId: 7 })).Completed;
        Assert.Equal(Proto.Outcome.Poisoned, read.Outcome);
        Assert.Contains("no program holding its ends took it over", read.Message, StringComparison.Ordinal);
        await leaving.WaitAsync(TimeSpan.FromSeconds(20));
        await Assert.ThrowsAsync<PoisonException>(async () => await local.ReadAsync());
    }

    [Fact(Timeout = 60_000)]
    public async Task Leave_TakerDiesOnTheOffer_ChannelPoisonedAndTheHomeLeavesWithinTheBound()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<int> local = await home.GetAny2AnyInAsync<int>("orphan");
        using var channel = UserKey.Channel($"http://127.0.0.1:{home.Port}");
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = await AttachReaderAsync(channel, "orphan");
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Read = new Proto.Read { Handle = 1, OpId = 7 } });

        Task leaving = home.DisposeAsync().AsTask();
        await NextAsync(call, f => f.Handover is not null);
        call.Dispose(); // the taker dies before it answers

        await leaving.WaitAsync(TimeSpan.FromSeconds(20));
        PoisonException poisoned = await Assert.ThrowsAsync<PoisonException>(async () => await local.ReadAsync());
        Assert.Contains("no program holding its ends took it over", poisoned.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 60_000)]
    public async Task Leave_BufferedTakerDiesAfterTakingBeforeTheNameMoves_ChannelPoisonedWithinTheBound()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelOut<int> local = await home.GetAny2AnyOutAsync<int>("kept", new FifoBuffer<int>(4));
        for (int i = 0; i < 3; i++)
        {
            await local.WriteAsync(i);
        }

        using var channel = UserKey.Channel($"http://127.0.0.1:{home.Port}");
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = await AttachReaderAsync(channel, "kept");

        // The buffer's values come first, in order, then the offer that counts them.
        Task leaving = home.DisposeAsync().AsTask();
        List<int> values = [];
        Proto.HomeFrame frame;
        while ((frame = await NextAsync(call, f => f.HandoverValue is not null || f.Handover is not null)).Handover is null)
        {
            Assert.False(frame.HandoverValue.More);
            values.Add(BitConverter.ToInt32(frame.HandoverValue.Data.Span));
        }

        Assert.Equal([0, 1, 2], values);
        Assert.Equal(("kept", 3u, "fifo", 4), (frame.Handover.Name, frame.Handover.ValueCount, frame.Handover.BufferKind, frame.Handover.BufferSlots));

        // It takes the home and dies before the name moves there (its incarnation names no live program).
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Taken = new Proto.HomeTaken { Name = "kept", Incarnation = "0123456789abcdef0123456789abcdef" } });
        call.Dispose();

        await leaving.WaitAsync(TimeSpan.FromSeconds(20));
        await Assert.ThrowsAsync<PoisonException>(async () => await local.WriteAsync(3));
    }

    [Fact(Timeout = 60_000)]
    public async Task Leave_OfferRefused_HomeLeftWithThePoisonComesAfterTheHeldAnswer()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        await home.GetAny2AnyInAsync<int>("refused");
        using var channel = UserKey.Channel($"http://127.0.0.1:{home.Port}");
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = await AttachReaderAsync(channel, "refused");
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Read = new Proto.Read { Handle = 1, OpId = 7 } });

        Task leaving = home.DisposeAsync().AsTask();
        await NextAsync(call, f => f.Handover is not null);
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Taken = new Proto.HomeTaken { Name = "refused", Status = (int)StatusCode.FailedPrecondition, Message = "not here" } });

        // The held read's answer first; then how the channel left: every operation the stream had
        // not answered by then was never performed, so a client may end it with that poison.
        Proto.HomeFrame frame = await NextAsync(call, f => f.Completed is { OpId: 7 } || f.HomeLeft is not null);
        Assert.Equal(Proto.Outcome.Poisoned, frame.Completed?.Outcome);
        Proto.HomeLeft left = (await NextAsync(call, f => f.HomeLeft is not null)).HomeLeft;
        Assert.Equal("refused", left.Name);
        Assert.Equal(frame.Completed!.Message, left.Poison);
        Assert.Contains("no program holding its ends took it over", left.Poison, StringComparison.Ordinal);
        await leaving.WaitAsync(TimeSpan.FromSeconds(20));
    }

    [Fact(Timeout = 60_000)]
    public async Task Leave_TakerSilentPastTheBound_EveryRemoteEndFailsWithThePoisonNamingTheChannel()
    {
        const string Name = "silent-taker";
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        await home.GetAny2AnyInAsync(Name, new InfiniteBuffer<int>());
        CspNode taker = await system.NodeAsync("taker");
        CspNode other = await system.NodeAsync("other");
        other.TakesHomes = false;
        AltingChannelOut<int> output = await taker.GetAny2AnyOutAsync<int>(Name);
        AltingChannelIn<int> input = await taker.GetAny2AnyInAsync<int>(Name);
        AltingChannelIn<int> idleInput = await other.GetAny2AnyInAsync<int>(Name);
        AltingChannelOut<int> idleOutput = await other.GetAny2AnyOutAsync<int>(Name);
        for (int i = 0; i < 1_000; i++)
        {
            await output.WriteAsync(i);
        }

        // The taker receives the values and the offer, then says nothing past the bound: the home
        // gives up, poisons the channel and leaves; the taker's answer comes too late.
        var late = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        HandoverValues.DelayedTakeForTests[Name] = () => late.Task;
        try
        {
            await home.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30));
        }
        finally
        {
            late.SetResult();
            HandoverValues.DelayedTakeForTests.TryRemove(Name, out _);
        }

        // Every end, with or without an operation in flight when the home left, learns why: the
        // poison names the channel, never the program that left cleanly as lost.
        Func<Task>[] operations =
        [
            async () => await input.ReadAsync(),
            async () => await output.WriteAsync(-1),
            async () => await idleInput.ReadAsync(),
            async () => await idleOutput.WriteAsync(-1),
        ];
        foreach (Func<Task> operation in operations)
        {
            PoisonException poisoned = await Assert.ThrowsAsync<PoisonException>(operation).WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Contains($"'{Name}'", poisoned.Message, StringComparison.Ordinal);
            Assert.Contains("said nothing", poisoned.Message, StringComparison.Ordinal);
        }
    }

    private static async Task<AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame>> AttachReaderAsync(Grpc.Net.Client.GrpcChannel channel, string name)
    {
        AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = new Proto.Link.LinkClient(channel).Connect();
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Hello = new Proto.Hello { ProtocolVersion = 1 } });
        await call.RequestStream.WriteAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 1, Name = name, Kind = "Any2Any", ValueType = "int32", Role = Proto.Role.Reader } });
        Proto.Attached attached = (await NextAsync(call, f => f.Attached is not null)).Attached;
        Assert.Equal(0, attached.Status);
        return call;
    }

    private static async Task<Proto.HomeFrame> NextAsync(AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call, Func<Proto.HomeFrame, bool> wanted)
    {
        while (await call.ResponseStream.MoveNext(CancellationToken.None))
        {
            if (wanted(call.ResponseStream.Current))
            {
                return call.ResponseStream.Current;
            }
        }

        throw new InvalidOperationException("The home's stream ended before the frame the test waits for.");
    }
}
