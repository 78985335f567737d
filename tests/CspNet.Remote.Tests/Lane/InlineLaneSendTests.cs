using CspNet.Remote.Internal.Client;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Lane;

/// <summary>
/// The writer's side of the bulk lane: a writer sends its value on its own thread when the lane is
/// idle, values that come meanwhile go through the lane's loop, all in the order queued, and a lane
/// that fails mid-value costs no value and no duplicate. Credited <c>byte[]</c> values go from their
/// own arrays.
/// </summary>
public sealed class InlineLaneSendTests
{
    private const int Threshold = 4096;

    [LaneTheory(Timeout = 180_000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Write_SeveralWritersMixedSizesAroundTheThreshold_EveryValueOnceInOrderPerWriter(bool buffered)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user", o => o.BulkLaneThreshold = Threshold);
        AltingChannelIn<byte[]> input = buffered
            ? await host.GetAny2OneInAsync("inline-mixed", new FifoBuffer<byte[]>(32))
            : await host.GetAny2OneInAsync<byte[]>("inline-mixed");
        const int Writers = 4;
        int perWriter = buffered ? 3_000 : 600;

        var outputs = new RemoteChannelOut<byte[]>[Writers];
        for (int w = 0; w < Writers; w++)
        {
            outputs[w] = (RemoteChannelOut<byte[]>)await user.GetAny2OneOutAsync<byte[]>("inline-mixed");
        }

        Task[] writing = new Task[Writers];
        for (int w = 0; w < Writers; w++)
        {
            RemoteChannelOut<byte[]> output = outputs[w];
            int writer = w;
            writing[w] = Task.Run(async () =>
            {
                for (int i = 0; i < perWriter; i++)
                {
                    await output.WriteAsync(Value(writer, i));
                }
            });
        }

        int[] next = new int[Writers];
        for (int n = 0; n < Writers * perWriter; n++)
        {
            byte[] value = await input.ReadAsync();
            int writer = value[4];
            int index = BitConverter.ToInt32(value);
            Assert.Equal(next[writer]++, index);
            Assert.Equal(Value(writer, index), value);
        }

        await Task.WhenAll(writing);
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing more waits
        PeerLink link = outputs[0].Link;
        Assert.True(link.ArrayLaneWrites > 0, "No value went on the lane.");
        Assert.True(link.LaneInlineSends > 0, "No value was sent by its writer's own thread.");
        Assert.True(link.HasLane);

        // Sizes on both sides of the threshold: on the lane and on the link, one stream per writer.
        static byte[] Value(int writer, int index)
        {
            byte[] value = new byte[Threshold - 3 + (index % 7) + (index % 11 == 0 ? 200_000 : 0)];
            BitConverter.TryWriteBytes(value, index);
            value[4] = (byte)writer;
            value[^1] = (byte)(index * 31 + writer);
            return value;
        }
    }

    [LaneTheory(Timeout = 120_000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Write_LaneBrokenWhileAnInlineSendIsHalfDone_EveryValueArrivesOnceInOrderViaTheLink(bool buffered)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user", o => o.BulkLaneThreshold = Threshold);
        AltingChannelIn<string> input = buffered
            ? await host.GetOne2OneInAsync("inline-broken", new FifoBuffer<string>(8))
            : await host.GetOne2OneInAsync<string>("inline-broken");
        var output = (RemoteChannelOut<string>)await user.GetOne2OneOutAsync<string>("inline-broken");
        const int Count = 200;
        const int BreakAt = 50;
        int partsSent = 0;
        bool brokeInline = false;
        output.Link.LanePartSentForTests = inline =>
        {
            // Half of a value is on the wire: the lane breaks under the send.
            if (Interlocked.Increment(ref partsSent) >= BreakAt && inline && !Volatile.Read(ref brokeInline))
            {
                Volatile.Write(ref brokeInline, true);
                output.Link.BreakLane();
            }
        };

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

        await writing.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing more waits
        Assert.True(Volatile.Read(ref brokeInline), "The lane was not broken during an inline send.");
        Assert.False(output.Link.HasLane);

        static string Value(int index) => $"{index}:" + new string((char)('a' + (index % 26)), Threshold + (index % 3 * 10_000));
    }

    [LaneFact(Timeout = 120_000)]
    public async Task Write_CreditedByteArrays_SentFromTheirOwnArraysAndStillOnceAfterTheLaneFailsPastTheirWrite()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user", o => o.BulkLaneThreshold = Threshold);
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync("credited-arrays", new FifoBuffer<byte[]>(64));
        var output = (RemoteChannelOut<byte[]>)await user.GetOne2OneOutAsync<byte[]>("credited-arrays");
        const int Count = 400;
        const int BreakAt = 150;
        byte[][] written = new byte[Count][];
        for (int i = 0; i < Count; i++)
        {
            written[i] = Value(i);
        }

        int partsSent = 0;
        var broken = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        output.Link.LanePartSentForTests = _ =>
        {
            if (Interlocked.Increment(ref partsSent) == BreakAt)
            {
                // Half of a credited value is on the wire, and its write completes all the same.
                broken.TrySetResult(output.Link.CreditedLaneWrites);
                output.Link.BreakLane();
            }
        };

        Task writing = Task.Run(async () =>
        {
            for (int i = 0; i < Count; i++)
            {
                await output.WriteAsync(written[i]);
            }
        });
        for (int i = 0; i < Count; i++)
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal(Value(i), value);
        }

        await writing.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing more waits
        long creditedBeforeBreak = await broken.Task.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.True(creditedBeforeBreak > 0, "No credited value went on the lane before it broke.");
        Assert.True(output.Link.ArrayLaneWrites >= output.Link.CreditedLaneWrites, "Credited byte[] values were copied, not sent from their arrays.");
        Assert.False(output.Link.HasLane);
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(Value(i), written[i]); // the lane and the link only read the writer's arrays
        }

        static byte[] Value(int index)
        {
            byte[] value = new byte[Threshold + (index % 5 * 7_000)];
            BitConverter.TryWriteBytes(value, index);
            value[^1] = (byte)(index * 13);
            return value;
        }
    }

    [LaneFact(Timeout = 60_000)]
    public async Task WriteAsync_CancelledAfterItsBytesWereSentInline_NothingWrittenAndTheNextValueArrives()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user", o => o.BulkLaneThreshold = Threshold);
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync<byte[]>("inline-cancelled");
        var output = (RemoteChannelOut<byte[]>)await user.GetOne2OneOutAsync<byte[]>("inline-cancelled");
        byte[] cancelled = new byte[64 << 10];
        cancelled[0] = 1;
        byte[] next = new byte[64 << 10];
        next[0] = 2;

        // No reader: the home holds the value, whose bytes the writer's thread sent in the call.
        using var cancel = new CancellationTokenSource();
        Task write = output.WriteAsync(cancelled, cancel.Token).AsTask();
        Assert.Equal(1, output.Link.LaneInlineSends);
        Assert.False(write.IsCompleted);
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write.WaitAsync(TimeSpan.FromSeconds(30)));

        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing was written
        Task writeNext = output.WriteAsync(next).AsTask();
        Assert.Equal(next, await input.ReadAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
        await writeNext.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(2, output.Link.ArrayLaneWrites);
    }
}
