namespace CspNet.Remote.Tests.Named;

/// <summary>
/// Streamed writes to buffered named channels (write credits, <see cref="CspNodeOptions.PipelineBufferedWrites"/>):
/// a remote write that holds a credit completes without a round trip, the buffer's capacity stays
/// exact, each writer's values arrive in order, and poison, cancellation and a lost writer program
/// keep CSP semantics (docs/DISTRIBUTED.md).
/// </summary>
public sealed class WriteCreditTests
{
    private const int Timeout = 60_000;

    [Theory(Timeout = Timeout)]
    [InlineData("One2One")]
    [InlineData("Any2One")]
    public async Task WriteAsync_FifoBufferOfFour_FifthWriteCompletesOnlyWhenTheReaderReads(string kind)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        var (input, output, probeIn, probeOut) = await ConnectAsync(system, kind, "four", new FifoBuffer<int>(4));

        for (int i = 0; i < 4; i++)
        {
            await output.WriteAsync(i); // no reader: the buffer (and the credits it grants) takes all four
        }

        Task fifth = await AssertWaitsAtTheHomeAsync(output.WriteAsync(4), probeIn, probeOut);

        Assert.Equal(0, await input.ReadAsync());
        await fifth;
        for (int i = 1; i <= 4; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }
    }

    [Fact(Timeout = 120_000)]
    public async Task WriteAsync_ThreeRemoteWritersAndTwoLocalOnes_EveryValueReadOnceInEachWritersOrder()
    {
        const int PerWriter = 25_000;
        const int RemoteWriters = 3;
        const int LocalWriters = 2;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");

        // A small buffer, so that writers run out of credits and fall back to waiting writes too.
        AltingChannelIn<long> input = await home.GetAny2OneInAsync<long>("many", new FifoBuffer<long>(8));
        var outputs = new List<IChannelOut<long>>();
        for (int w = 0; w < RemoteWriters; w++)
        {
            CspNode writer = await system.NodeAsync("writer" + w);
            outputs.Add(await writer.GetAny2OneOutAsync<long>("many"));
        }

        for (int w = 0; w < LocalWriters; w++)
        {
            outputs.Add(await home.GetAny2OneOutAsync<long>("many"));
        }

        Task[] writing = [.. outputs.Select((output, w) => Task.Run(async () =>
        {
            for (long i = 0; i < PerWriter; i++)
            {
                await output.WriteAsync(((long)w << 32) | i);
            }
        }))];

        var next = new long[outputs.Count];
        for (int n = 0; n < PerWriter * outputs.Count; n++)
        {
            long value = await input.ReadAsync();
            int w = (int)(value >> 32);
            Assert.Equal(next[w], value & 0xFFFF_FFFF);
            next[w]++;
        }

        await Task.WhenAll(writing);
        Assert.All(next, count => Assert.Equal(PerWriter, count));
    }

    [Fact(Timeout = Timeout)]
    public async Task Poison_ByTheWriterAfterCreditedWrites_EveryValueIsReadThenThePoison()
    {
        const int Count = 2_000;
        await using TestSystem system = await TestSystem.StartAsync();
        var (input, output, _, _) = await ConnectAsync(system, "One2One", "closing", new FifoBuffer<int>(16));

        Task writing = Task.Run(async () =>
        {
            for (int i = 0; i < Count; i++)
            {
                await output.WriteAsync(i);
            }

            output.Poison();
        });

        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        await writing;
        await Assert.ThrowsAsync<PoisonException>(async () => await input.ReadAsync());
        await Assert.ThrowsAsync<PoisonException>(async () => await output.WriteAsync(-1));
    }

    [Fact(Timeout = Timeout)]
    public async Task Poison_AtTheHomeWhileCreditedWritesAreInFlight_EveryCompletedWriteIsReadable()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        var (input, output, probeIn, probeOut) = await ConnectAsync(system, "Any2One", "flow", new FifoBuffer<int>(16));

        Task<int> writing = Task.Run(async () =>
        {
            int completed = 0;
            try
            {
                while (true)
                {
                    await output.WriteAsync(completed);
                    completed++;
                }
            }
            catch (PoisonException)
            {
            }

            // Behind every value written on the link: once the home has it, it has them all.
            await probeOut.WriteAsync(completed);
            return completed;
        });

        for (int i = 0; i < 100; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        input.Poison();
        int written = await probeIn.ReadAsync();
        Assert.Equal(written, await writing);

        // Buffered values stay readable after poison, values that arrived after it included.
        for (int i = 100; i < written; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        await Assert.ThrowsAsync<PoisonException>(async () => await input.ReadAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_CancelledWhileTheBufferIsFull_DeliversNothingAndLaterWritesGoOn()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        var (input, output, _, _) = await ConnectAsync(system, "One2One", "small", new FifoBuffer<int>(2));
        await output.WriteAsync(0);
        await output.WriteAsync(1);

        // No credit is left and no slot is free: the write waits at the home until cancelled.
        using (var cts = new CancellationTokenSource())
        {
            Task cancelled = output.WriteAsync(99, cts.Token).AsTask();
            await cts.CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled);
        }

        // A token cancelled before the write spends nothing and sends nothing.
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await output.WriteAsync(98, new CancellationToken(canceled: true)));

        Task next = output.WriteAsync(2).AsTask();
        Assert.Equal(0, await input.ReadAsync());
        Assert.Equal(1, await input.ReadAsync());
        await next;
        Assert.Equal(2, await input.ReadAsync());
        await output.WriteAsync(3);
        Assert.Equal(3, await input.ReadAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_UserBufferOfUnknownCapacity_WaitsForTheHomeAndKeepsItsCapacity()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        var (input, output, probeIn, probeOut) = await ConnectAsync(system, "One2One", "custom", new TwoSlotBuffer());
        await output.WriteAsync(0);
        await output.WriteAsync(1);

        Task third = await AssertWaitsAtTheHomeAsync(output.WriteAsync(2), probeIn, probeOut);

        Assert.Equal(0, await input.ReadAsync());
        await third;
        for (int i = 3; i < 200; i++)
        {
            Task write = output.WriteAsync(i).AsTask();
            Assert.Equal(i - 2, await input.ReadAsync());
            await write;
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_PipelineBufferedWritesOff_EveryValueArrivesInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        var (input, output, _, _) = await ConnectAsync(system, "One2One", "plain", new FifoBuffer<int>(4), options => options.PipelineBufferedWrites = false);

        Task writing = Task.Run(async () =>
        {
            for (int i = 0; i < 500; i++)
            {
                await output.WriteAsync(i);
            }
        });

        for (int i = 0; i < 500; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        await writing;
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_CreditedValueTheHomeCannotPlace_PoisonsTheChannelSayingWhy()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", options => options.MaxValueSize = 1024);
        CspNode writer = await system.NodeAsync("writer");
        AltingChannelIn<byte[]> input = await home.GetOne2OneInAsync("limited", new FifoBuffer<byte[]>(4));
        AltingChannelOut<byte[]> output = await writer.GetOne2OneOutAsync<byte[]>("limited");
        await output.WriteAsync([1]);

        // Spends a credit, so it completes here; the home, which accepts at most 1 KiB, cannot place it.
        await output.WriteAsync(new byte[4096]);

        Assert.Equal([1], await input.ReadAsync());
        PoisonException poisoned = await Assert.ThrowsAnyAsync<PoisonException>(async () => await input.ReadAsync());
        Assert.Contains("could not be placed", poisoned.Message, StringComparison.Ordinal);
        await Assert.ThrowsAnyAsync<PoisonException>(async () =>
        {
            // The writer hears of the poison: at the latest when its credits run out.
            for (int i = 0; i < 8; i++)
            {
                await output.WriteAsync([2]);
            }
        });
    }

    [Fact(Timeout = Timeout)]
    public async Task KilledWriterProgram_HoldingCredits_ItsReservedSlotsGoBackToLocalWriters()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<int> input = await home.GetAny2OneInAsync<int>("reserved", new FifoBuffer<int>(4));
        AltingChannelOut<int> local = await home.GetAny2OneOutAsync<int>("reserved");

        // The child's first write fills one slot; the home then reserves the other three for it
        // before it answers, so they are reserved once the child says it wrote.
        ChildNode writer = system.Child("write-hold", "Any2One", "reserved", "1");
        await writer.WaitForAsync("wrote 1");
        Task localWrite = local.WriteAsync(100).AsTask();
        Assert.False(localWrite.IsCompleted); // one value and three reserved slots: full

        await writer.KillAsync();

        await localWrite; // the lost program's reservations were released
        Assert.Equal(0, await input.ReadAsync());
        Assert.Equal(100, await input.ReadAsync());
    }

    /// <summary>
    /// A home program with the buffered channel <paramref name="name"/> (read there) and an unbuffered
    /// Any2One probe channel beside it, and a writer program attached to both over one link: a
    /// value the home reads from the probe was sent after everything the writer sent before it.
    /// </summary>
    private static async Task<(AltingChannelIn<int> Input, IChannelOut<int> Output, AltingChannelIn<int> ProbeIn, IChannelOut<int> ProbeOut)> ConnectAsync(
        TestSystem system, string kind, string name, IBuffer<int> buffer, Action<CspNodeOptions>? configureWriter = null)
    {
        CspNode home = await system.NodeAsync("home");
        CspNode writer = await system.NodeAsync("writer", configureWriter);
        bool one2One = kind == "One2One";
        AltingChannelIn<int> input = one2One ? await home.GetOne2OneInAsync(name, buffer) : await home.GetAny2OneInAsync(name, buffer);
        AltingChannelIn<int> probeIn = await home.GetAny2OneInAsync<int>(name + "-probe");
        AltingChannelOut<int> output = one2One ? await writer.GetOne2OneOutAsync<int>(name) : await writer.GetAny2OneOutAsync<int>(name);
        return (input, output, probeIn, await writer.GetAny2OneOutAsync<int>(name + "-probe"));
    }

    /// <summary>
    /// Asserts that <paramref name="write"/> has reached the home and waits there: the probe travels
    /// the same link behind it, so once the home has read the probe it has handled the write.
    /// </summary>
    private static async Task<Task> AssertWaitsAtTheHomeAsync(ValueTask write, AltingChannelIn<int> probeIn, IChannelOut<int> probeOut)
    {
        Task waiting = write.AsTask();
        Task probe = probeOut.WriteAsync(0).AsTask();
        Assert.Equal(0, await probeIn.ReadAsync());
        await probe;
        Assert.False(waiting.IsCompleted);
        return waiting;
    }

    /// <summary>A user buffer of two values: the home cannot know its capacity, so it grants no credits.</summary>
    private sealed class TwoSlotBuffer : IBuffer<int>
    {
        private readonly Queue<int> _items = new();

        public int Count => _items.Count;

        public bool IsFull => _items.Count >= 2;

        public void Put(int item) => _items.Enqueue(item);

        public int Take() => _items.Dequeue();
    }
}
