using System.Net.Sockets;
using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Lane;

/// <summary>
/// The stream's byte bound (<see cref="CspNodeOptions.MaxBytesPerLink"/>) for values that came on
/// the bulk lane: a plain lane write that waits behind a credited lane value still on its way is
/// counted from the moment its bytes arrive, so a client cannot park unbounded bytes behind a
/// value it never sends.
/// </summary>
public sealed class LaneBoundsTests
{
    private const int ValueBytes = 400_000;

    [LaneFact(Timeout = 60_000)]
    public async Task LaneWrite_QueuedBehindACreditedLaneValue_CountedInMaxBytesPerLinkWhenItsBytesArrive()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o =>
        {
            o.MaxBytesPerLink = 1 << 20;
            o.MaxValueSize = 512 << 10;
            o.PeerTimeout = TimeSpan.FromSeconds(20); // the credited value is late on purpose: it must not time out first
        });
        AltingChannelIn<byte[]> input = await home.GetOne2OneInAsync("queued-bounds", new FifoBuffer<byte[]>(4));
        await using var client = await BulkLaneTests.RawClient.StartAsync(home, offerLane: true, writeCredits: true);
        await client.SendAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 1, Name = "queued-bounds", Kind = "One2One", ValueType = "bytes", Role = Proto.Role.Writer } });
        Assert.Equal(0, (await client.NextAsync()).Attached.Status);

        // A first plain write; the home then grants credits to the end.
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Data = ByteString.CopyFrom(Encoded(1)) } });
        bool completed = false, credited = false;
        while (!completed || !credited)
        {
            Proto.HomeFrame frame = await client.NextAsync();
            completed |= frame.Completed is { OpId: 1, Outcome: Proto.Outcome.Ok };
            credited |= frame.Credit is { Handle: 1, Count: > 0 };
        }

        using Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory);

        // A credited lane value whose bytes do not come yet, then three plain lane writes behind
        // it whose bytes do: two fit in the stream's megabyte, the third must be refused now. Which
        // of the three is counted last depends on when each arrival's continuation runs, so which
        // one is refused is not fixed (a writing process never has two writes in flight anyway).
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 2, Credited = true, Lane = true } });
        for (ulong op = 3; op <= 5; op++)
        {
            await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = op, Lane = true } });
        }

        for (byte op = 3; op <= 5; op++)
        {
            await SendOnLaneAsync(lane, op);
        }

        Proto.Completed refused = await client.CompletedAsync();
        Assert.InRange(refused.OpId, 3ul, 5ul);
        Assert.Equal((Proto.Outcome.Error, StatusCode.ResourceExhausted), (refused.Outcome, (StatusCode)refused.Status));
        Assert.Contains("MaxBytesPerLink", refused.Message, StringComparison.Ordinal);
        byte[] admitted = [.. new byte[] { 3, 4, 5 }.Where(op => op != (byte)refused.OpId)];

        // The credited value comes: it and the two admitted writes are placed in order, nothing of the refused one.
        await SendOnLaneAsync(lane, 2);
        var answered = new HashSet<ulong>();
        while (answered.Count < 3)
        {
            Proto.Completed done = await client.CompletedAsync();
            Assert.Equal(Proto.Outcome.Ok, done.Outcome);
            answered.Add(done.OpId);
        }

        Assert.Equal([2ul, .. admitted.Select(op => (ulong)op)], answered.Order());
        byte[] placed = [1, 2, .. admitted];
        foreach (byte expected in placed)
        {
            Assert.Equal(expected, (await input.ReadAsync())[0]);
        }

        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // the refused value never slipped in
    }

    // The "bytes" encoding: a presence byte, then the bytes.
    private static byte[] Encoded(byte first)
    {
        byte[] encoded = new byte[ValueBytes + 1];
        encoded[0] = 1;
        encoded[1] = first;
        return encoded;
    }

    private static async Task SendOnLaneAsync(Socket lane, byte op)
    {
        byte[] encoded = Encoded(op);
        await lane.SendAsync(BulkLaneTests.Header(op, (uint)encoded.Length));
        await lane.SendAsync(encoded);
    }
}
