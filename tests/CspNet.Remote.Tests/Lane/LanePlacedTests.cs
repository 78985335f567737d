using System.Net.Sockets;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Lane;

/// <summary>
/// Credited lane values answered in batches (link.proto, LanePlaced): a burst costs one answer, each
/// op is named exactly once and in the order placed, a value the lane did not bring is still
/// answered on its own (ABORTED, then sent on the link into its place), a client that did not ask
/// gets one Completed each, and a leaving writer waits for the answers of its values.
/// </summary>
public sealed class LanePlacedTests
{
    private const int ValueBytes = 40_000;
    private const ulong FirstOp = 2, LastOp = 9; // the burst: op 1 is the plain write that earns credits

    [LaneFact(Timeout = 60_000)]
    public async Task LanePlaced_BurstOfCreditedLaneValues_OneFrameNamesEachOpOnceInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync("burst", new FifoBuffer<byte[]>(16));
        await home.GetAny2OneInAsync<byte[]>("fence");
        await using var client = await StartWithCreditsAsync(home, "burst", lanePlaced: true);
        using Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory);

        List<Proto.HomeFrame> answers = await SendBurstAsync(client, lane);
        answers.AddRange(await AnswersAsync(client, answers, FirstOp, LastOp));

        // Every later value had come when the first was placed: they all go in one frame.
        Proto.HomeFrame placed = Assert.Single(answers, frame => frame.LanePlaced is not null);
        Assert.Equal(Ops(FirstOp, LastOp), placed.LanePlaced.OpIds);
        Assert.DoesNotContain(answers, frame => frame.Completed is { OpId: >= FirstOp and <= LastOp });
        await ReadInOrderAsync(input, 1, (byte)LastOp);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task LanePlaced_ClientThatDoesNotAskForIt_GetsOneCompletedOkPerValue()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync("burst", new FifoBuffer<byte[]>(16));
        await home.GetAny2OneInAsync<byte[]>("fence");
        await using var client = await StartWithCreditsAsync(home, "burst", lanePlaced: false);
        Assert.False(client.Hello.LanePlaced);
        using Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory);

        List<Proto.HomeFrame> answers = await SendBurstAsync(client, lane);
        answers.AddRange(await AnswersAsync(client, answers, FirstOp, LastOp));

        Assert.DoesNotContain(answers, frame => frame.LanePlaced is not null);
        Assert.Equal(Ops(FirstOp, LastOp), answers.Where(frame => frame.Completed is { Outcome: Proto.Outcome.Ok }).Select(frame => frame.Completed.OpId));
        await ReadInOrderAsync(input, 1, (byte)LastOp);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task LanePlaced_LaneCutInTheMiddleOfABurst_UnplacedOnesAbortedAndResentNothingDuplicated()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync("cut-burst", new FifoBuffer<byte[]>(16));
        await home.GetAny2OneInAsync<byte[]>("fence");
        await using var client = await StartWithCreditsAsync(home, "cut-burst", lanePlaced: true);

        // Ops 2-5 come whole, op 6 half; once 2-5 are placed the lane is gone: 6-9 never come on it.
        // (Closed only then: payloads still in a closing connection's pipe may be dropped, which
        // sends them on the link too, but would not make a deterministic test.)
        var placed = new List<ulong>();
        var aborted = new List<ulong>();
        using (Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory))
        {
            for (ulong op = FirstOp; op <= 5; op++)
            {
                await SendOnLaneAsync(lane, op);
            }

            await lane.SendAsync(BulkLaneTests.Header(6, ValueBytes + 1));
            await lane.SendAsync(Encoded(6).AsMemory(0, ValueBytes / 2));
            for (ulong op = FirstOp; op <= LastOp; op++)
            {
                await client.SendAsync(CreditedOnLane(op));
            }

            while (placed.Count < 4)
            {
                placed.AddRange(await NextAnswersAsync(client, aborted));
            }
        }

        while (placed.Count + aborted.Count < (int)(LastOp - FirstOp + 1))
        {
            placed.AddRange(await NextAnswersAsync(client, aborted));
        }

        Assert.Equal(Ops(FirstOp, 5), placed);
        Assert.Equal(Ops(6, LastOp), aborted);
        await ReadInOrderAsync(input, 1, (byte)LastOp);
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing twice

        // The values sent again took their places unanswered: no second answer for them.
        await client.SendAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 2, Name = "fence", Kind = "Any2One", ValueType = "bytes", Role = Proto.Role.Writer } });
        for (Proto.HomeFrame frame = await client.NextAsync(); frame.Attached is null; frame = await client.NextAsync())
        {
            Assert.Empty(Answered(frame));
        }
    }

    [LaneFact(Timeout = 60_000)]
    public async Task DisposeAsync_WriterLeavingRightAfterABurstOnTheLane_EveryValueArrivesAndTheChannelStaysClean()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync("leaving-burst", new FifoBuffer<byte[]>(16));
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("leaving-burst");
        const int Count = 12;

        // The first write earns credits; the rest are credited lane values, written as far as the
        // writer knows when it leaves: the leaving link waits for the home to have each.
        for (int i = 0; i < Count; i++)
        {
            byte[] value = new byte[4 << 20];
            value[0] = (byte)i;
            value[^1] = (byte)i;
            await output.WriteAsync(value);
        }

        Assert.True(((RemoteChannelOut<byte[]>)output).Link.CreditedLaneWrites > 0, "No credited value went on the lane.");
        await user.DisposeAsync();

        for (int i = 0; i < Count; i++)
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal(((byte)i, (byte)i), (value[0], value[^1]));
        }
    }

    /// <summary>
    /// The ops the next frame says were placed; an ABORTED op is added to <paramref name="aborted"/>
    /// and sent again on the link under the same op, where it takes its place unanswered.
    /// </summary>
    private static async Task<IEnumerable<ulong>> NextAnswersAsync(BulkLaneTests.RawClient client, List<ulong> aborted)
    {
        Proto.HomeFrame frame = await client.NextAsync();
        if (frame.Completed is { } completed)
        {
            Assert.Equal((Proto.Outcome.Error, StatusCode.Aborted), (completed.Outcome, (StatusCode)completed.Status));
            aborted.Add(completed.OpId);
            await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = completed.OpId, Credited = true, Data = ByteString.CopyFrom(Encoded((byte)completed.OpId)) } });
        }

        return frame.LanePlaced?.OpIds ?? [];
    }

    /// <summary>A raw client with lane and credits, whose writing end on <paramref name="name"/> holds at least a burst's credits.</summary>
    private static async Task<BulkLaneTests.RawClient> StartWithCreditsAsync(CspNode home, string name, bool lanePlaced)
    {
        var client = await BulkLaneTests.RawClient.StartAsync(home, offerLane: true, writeCredits: true, lanePlaced: lanePlaced);
        await client.AttachWriterAsync(name);
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Data = ByteString.CopyFrom(Encoded(1)) } });
        bool completed = false;
        long credits = 0;
        while (!completed || credits < (long)(LastOp - FirstOp + 1))
        {
            Proto.HomeFrame frame = await client.NextAsync();
            completed |= frame.Completed is { OpId: 1, Outcome: Proto.Outcome.Ok };
            credits += frame.Credit is { Handle: 1 } credit ? credit.Count : 0;
        }

        return client;
    }

    /// <summary>
    /// The burst, so that the home places it back to back: the bytes of ops 3-9 first, then the
    /// Writes of 2-9, then (once the home has read them all: an Attach answered behind them) op 2's bytes.
    /// </summary>
    private static async Task<List<Proto.HomeFrame>> SendBurstAsync(BulkLaneTests.RawClient client, Socket lane)
    {
        for (ulong op = FirstOp + 1; op <= LastOp; op++)
        {
            await SendOnLaneAsync(lane, op);
        }

        for (ulong op = FirstOp; op <= LastOp; op++)
        {
            await client.SendAsync(CreditedOnLane(op));
        }

        await client.SendAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 2, Name = "fence", Kind = "Any2One", ValueType = "bytes", Role = Proto.Role.Writer } });
        var before = new List<Proto.HomeFrame>();
        for (Proto.HomeFrame frame = await client.NextAsync(); frame.Attached is null; frame = await client.NextAsync())
        {
            before.Add(frame);
        }

        await SendOnLaneAsync(lane, FirstOp);
        return before;
    }

    /// <summary>Frames until every op from <paramref name="first"/> to <paramref name="last"/> has an answer (in <paramref name="earlier"/> or now).</summary>
    private static async Task<List<Proto.HomeFrame>> AnswersAsync(BulkLaneTests.RawClient client, List<Proto.HomeFrame> earlier, ulong first, ulong last)
    {
        var frames = new List<Proto.HomeFrame>();
        var answered = new HashSet<ulong>(earlier.Concat(frames).SelectMany(Answered));
        while (!Ops(first, last).All(answered.Contains))
        {
            Proto.HomeFrame frame = await client.NextAsync();
            frames.Add(frame);
            answered.UnionWith(Answered(frame));
        }

        return frames;
    }

    private static IEnumerable<ulong> Answered(Proto.HomeFrame frame) =>
        frame.LanePlaced?.OpIds ?? (frame.Completed is { } completed ? [completed.OpId] : []);

    private static async Task ReadInOrderAsync(AltingChannelIn<byte[]> input, byte first, byte last)
    {
        for (int expected = first; expected <= last; expected++)
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal((ValueBytes, (byte)expected), (value.Length, value[0]));
        }
    }

    private static List<ulong> Ops(ulong first, ulong last) => [.. Enumerable.Range((int)first, (int)(last - first + 1)).Select(op => (ulong)op)];

    private static Proto.ClientFrame CreditedOnLane(ulong op) =>
        new() { Write = new Proto.Write { Handle = 1, OpId = op, Credited = true, Lane = true } };

    // The "bytes" encoding: a presence byte, then the bytes (the first names the op).
    private static byte[] Encoded(byte op)
    {
        byte[] encoded = new byte[ValueBytes + 1];
        encoded[0] = 1;
        encoded[1] = op;
        return encoded;
    }

    private static async Task SendOnLaneAsync(Socket lane, ulong op)
    {
        byte[] encoded = Encoded((byte)op);
        await lane.SendAsync(BulkLaneTests.Header(op, (uint)encoded.Length));
        await lane.SendAsync(encoded);
    }
}
