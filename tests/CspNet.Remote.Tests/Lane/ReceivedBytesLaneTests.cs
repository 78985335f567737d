using System.Net.Sockets;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using static CspNet.Remote.Tests.Lane.BulkLaneTests;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Lane;

/// <summary>
/// <c>byte[]</c> values marked as such on the bulk lane (Hello.lane_bytes): the home receives their
/// bytes straight into the reader's array, falls back to decoding when its channel is of another
/// type, and a marked value cut short or a mark that breaks the framing costs no value and no duplicate.
/// </summary>
public sealed class ReceivedBytesLaneTests
{
    [LaneFact(Timeout = 120_000)]
    public async Task Write_BufferedStreamOfByteArrays_EachReceivedStraightOnceInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user", o => o.BulkLaneThreshold = 1024);
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync("straight-stream", new FifoBuffer<byte[]>(16));
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("straight-stream");
        const int Count = 10_000;

        Task writing = Task.Run(async () =>
        {
            for (int i = 0; i < Count; i++)
            {
                await output.WriteAsync(Value(i));
            }
        });
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(Value(i), await input.ReadAsync());
        }

        await writing;
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing more waits
        Assert.True(((RemoteChannelOut<byte[]>)output).Link.CreditedLaneWrites > 0, "No credited value went on the lane.");
        Assert.Equal(Count, ((BulkLaneHost)host.Lanes!).BytesValuesReceived); // each at or above the threshold: each on the lane, received straight

        static byte[] Value(int index)
        {
            byte[] value = new byte[1024 + (index % 5 * 300)];
            BitConverter.TryWriteBytes(value, index);
            value[^1] = (byte)index;
            return value;
        }
    }

    [LaneFact(Timeout = 120_000)]
    public async Task Write_UnbufferedByteArrays_SentFromTheirOwnArraysEachOnceInOrderAndOnTheLinkAfterTheLaneBreaks()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user", o => o.BulkLaneThreshold = 1024);
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync<byte[]>("from-arrays");
        var output = (RemoteChannelOut<byte[]>)await user.GetOne2OneOutAsync<byte[]>("from-arrays");
        const int Count = 2_000;
        const int Broken = Count / 2;

        // A synchronous write completes when the reader has the value: the lane sends it from the
        // writer's own array, and nothing changes the array meanwhile. Half-way the lane breaks: the
        // rest go on the link, encoded, each once.
        Task writing = Task.Run(async () =>
        {
            for (int i = 0; i < Count; i++)
            {
                if (i == Broken)
                {
                    output.Link.BreakLane();
                }

                await output.WriteAsync(Value(i));
            }
        });
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(Value(i), await input.ReadAsync());
        }

        await writing;
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing more waits
        Assert.Equal(Broken, output.Link.ArrayLaneWrites);
        Assert.Equal(Broken, ((BulkLaneHost)host.Lanes!).BytesValuesReceived);

        static byte[] Value(int index)
        {
            byte[] value = new byte[1023 + (index % 7 * 5_000)];
            BitConverter.TryWriteBytes(value, index);
            value[^1] = (byte)index;
            return value;
        }
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawHello_ClientThatSaysLaneBytes_HomeAgreesOnlyThen()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        await using var saying = await RawClient.StartAsync(home, offerLane: true, laneBytes: true);
        await using var silent = await RawClient.StartAsync(home, offerLane: true);

        Assert.True(saying.Hello.LaneBytes);
        Assert.False(silent.Hello.LaneBytes);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawLane_MarkedValueForAChannelOfStrings_DecodedByItsCodec()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<string> input = await home.GetAny2OneInAsync<string>("strings");
        await using var client = await RawClient.StartAsync(home, offerLane: true, laneBytes: true);
        await client.SendAsync(new Proto.ClientFrame { Attach = new Proto.Attach { Handle = 1, Name = "strings", Kind = "Any2One", ValueType = "string", Role = Proto.Role.Writer } });
        Assert.Equal(0, (await client.NextAsync()).Attached.Status);
        string text = new('ü', 30_000);
        byte[] encoded = [1, .. System.Text.Encoding.UTF8.GetBytes(text)];

        using Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory);
        await lane.SendAsync(Marked(Header(opId: 1, length: (uint)encoded.Length)));
        await lane.SendAsync(encoded);
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Lane = true } });

        Task<string> read = input.ReadAsync().AsTask();
        Assert.Equal((1ul, Proto.Outcome.Ok), await client.CompletedAsync() is var ok ? (ok.OpId, ok.Outcome) : default);
        Assert.Equal(text, await read);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawLane_CutInTheMiddleOfAMarkedValue_WriteAbortedAndTheValueArrivesOnceFromTheLink()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("cut-marked");
        await using var client = await RawClient.StartAsync(home, offerLane: true, laneBytes: true);
        await client.AttachWriterAsync("cut-marked");

        using (Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory))
        {
            await lane.SendAsync(Marked(Header(opId: 1, length: 100_000)));
            await lane.SendAsync((byte[])[1, .. new byte[49_999]]);
            await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Lane = true } });
        }

        Proto.Completed aborted = await client.CompletedAsync();
        Assert.Equal((1ul, Proto.Outcome.Error, StatusCode.Aborted), (aborted.OpId, aborted.Outcome, (StatusCode)aborted.Status));

        byte[] value = [1, .. Enumerable.Repeat((byte)3, 100_000 - 1)];
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 2, Data = ByteString.CopyFrom(value) } });
        Task<byte[]> read = input.ReadAsync().AsTask();
        Assert.Equal(value.AsSpan(1).ToArray(), await read);
        Assert.Equal((2ul, Proto.Outcome.Ok), await client.CompletedAsync() is var ok ? (ok.OpId, ok.Outcome) : default);
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // no second value waits
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawLane_MarkWithoutLaneBytesInHello_ConnectionDroppedAndWriteAborted()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("unagreed");
        await using var client = await RawClient.StartAsync(home, offerLane: true);
        await client.AttachWriterAsync("unagreed");

        await AssertRefusedAsync(client, input, Marked(Header(opId: 1, length: 40_001)), [1, .. new byte[40_000]]);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawLane_MarkedValueWithoutPresenceByte_ConnectionDroppedAndWriteAborted()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("no-presence");
        await using var client = await RawClient.StartAsync(home, offerLane: true, laneBytes: true);
        await client.AttachWriterAsync("no-presence");

        await AssertRefusedAsync(client, input, Marked(Header(opId: 1, length: 40_001)), [0, .. new byte[40_000]]);
    }

    /// <summary>The payload breaks the lane: the home closes it, answers the Write ABORTED and writes nothing.</summary>
    private static async Task AssertRefusedAsync(RawClient client, AltingChannelIn<byte[]> input, byte[] header, byte[] payload)
    {
        using (Socket lane = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory))
        {
            await lane.SendAsync(header);
            await lane.SendAsync(payload);
            await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Lane = true } });
            await RawClient.AssertLaneClosedAsync(lane); // the home closed it
        }

        Proto.Completed aborted = await client.CompletedAsync();
        Assert.Equal((1ul, Proto.Outcome.Error, StatusCode.Aborted), (aborted.OpId, aborted.Outcome, (StatusCode)aborted.Status));
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing was written
    }

    private static byte[] Marked(byte[] header)
    {
        header[11] |= 0x80; // the top bit of the little-endian length
        return header;
    }
}
