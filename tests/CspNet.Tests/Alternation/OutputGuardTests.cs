using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>Output guards: offered writes as alternatives (ch.Out.Offer(v) in the guard array).</summary>
public class OutputGuardTests
{
    [Fact]
    public void OfferedValue_AfterOffer_IsTheValueAndOfferReturnsTheEnd()
    {
        var channel = new One2OneChannel<string>();
        AltingChannelOut<string> end = channel.Out;
        Assert.Null(end.OfferedValue);
        Assert.Same(end, end.Offer("a"));
        Assert.Equal("a", end.OfferedValue);
        end.Offer("b");
        Assert.Equal("b", end.OfferedValue);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_ReaderAlreadyParked_DeliversAtOnce()
    {
        var channel = new One2OneChannel<int>();
        ValueTask<int> reader = channel.ReadAsync();
        Assert.False(reader.IsCompleted);
        var alt = new Alternative(channel.Out.Offer(11), new CSTimer());

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(11, await reader);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_ReaderArrivesLater_TakesOfferAndCompletesSelect()
    {
        var channel = new One2OneChannel<int>();
        var alt = new Alternative(new CSTimer(), channel.Out.Offer(12));

        ValueTask<int> select = alt.PriSelectAsync();
        Assert.False(select.IsCompleted, "No reader yet: the offer is parked.");
        Assert.Equal(12, await channel.ReadAsync());
        Assert.Equal(1, await select);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_ThreadReaderArrivesLater_TakesOffer()
    {
        var channel = new One2OneChannel<int>();
        var alt = new Alternative(channel.Out.Offer(13));

        AltThread<int> selector = AltThread.Start(() => alt.PriSelect());
        selector.WaitUntilBlockedOrEnded();
        Assert.Equal(13, await AltThread.Start(() => channel.Read()).Completion);
        Assert.Equal(0, await selector.Completion);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_BufferWithRoom_CommitsWithoutReader()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(2));
        var alt = new Alternative(channel.Out, new CSTimer());

        channel.Out.Offer(1);
        Assert.Equal(0, alt.PriSelect());
        channel.Out.Offer(2);
        Assert.Equal(0, await alt.PriSelectAsync());
        Assert.Equal(1, await channel.ReadAsync());
        Assert.Equal(2, await channel.ReadAsync());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_FullBuffer_WaitsUntilReaderFreesASlot()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
        await channel.WriteAsync(1);
        var alt = new Alternative(channel.Out.Offer(2));

        ValueTask<int> select = alt.PriSelectAsync();
        Assert.False(select.IsCompleted, "The buffer is full: the offer waits.");
        Assert.Equal(1, await channel.ReadAsync());
        Assert.Equal(0, await select);
        Assert.Equal(2, await channel.ReadAsync());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_OutputGuardOnNeverFullBuffers_AlwaysCommitsAtOnce()
    {
        var overwrite = new One2OneChannel<int>(new OverwriteOldestBuffer<int>(2));
        var infinite = new One2OneChannel<int>(new InfiniteBuffer<int>());
        var never = new One2OneChannel<int>();
        var alt = new Alternative(never.In, overwrite.Out, infinite.Out);

        for (int v = 0; v < 10; v++)
        {
            overwrite.Out.Offer(v);
            infinite.Out.Offer(v);
            Assert.Equal(1, alt.PriSelect([true, true, false]));
            Assert.Equal(2, await alt.PriSelectAsync([true, false, true]));
        }

        Assert.Equal(8, await overwrite.ReadAsync());
        Assert.Equal(9, await overwrite.ReadAsync());
        for (int v = 0; v < 10; v++)
        {
            Assert.Equal(v, await infinite.ReadAsync());
        }
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_TwoOffersOneReader_UnchosenOfferWritesNothing()
    {
        var a = new One2OneChannel<int>();
        var b = new One2OneChannel<int>();
        ValueTask<int> readerB = b.ReadAsync();
        var alt = new Alternative(a.Out.Offer(1), b.Out.Offer(2));

        Assert.Equal(1, alt.PriSelect());
        Assert.Equal(2, await readerB);

        // A reader that comes to channel a now finds nothing: the value 1 was never written.
        ValueTask<int> readerA = a.ReadAsync();
        Assert.False(readerA.IsCompleted, "The unchosen offer must not be delivered.");
        await a.WriteAsync(3);
        Assert.Equal(3, await readerA);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_TwoParkedOffersReaderOnSecond_FirstOfferWithdrawn()
    {
        var a = new One2OneChannel<int>();
        var b = new One2OneChannel<int>();
        var alt = new Alternative(a.Out.Offer(1), b.Out.Offer(2));

        ValueTask<int> select = alt.PriSelectAsync();
        Assert.False(select.IsCompleted);
        Assert.Equal(2, await b.ReadAsync());
        Assert.Equal(1, await select);

        ValueTask<int> readerA = a.ReadAsync();
        Assert.False(readerA.IsCompleted, "The unchosen offer was withdrawn.");
        await a.WriteAsync(3);
        Assert.Equal(3, await readerA);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_OfferThenTimerFires_WritesNothing()
    {
        var channel = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative(channel.Out.Offer(5), timer);
        timer.RelativeTimeOut(20);

        Assert.Equal(1, await alt.PriSelectAsync());
        timer.RelativeTimeOut(20);
        Assert.Equal(1, await AltThread.Start(() => alt.PriSelect()).Completion);

        ValueTask<int> reader = channel.ReadAsync();
        Assert.False(reader.IsCompleted, "The offer lapsed with the timeout.");
        await channel.WriteAsync(6);
        Assert.Equal(6, await reader);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_CancelledReaderDoesNotTakeOffer()
    {
        var channel = new One2OneChannel<int>();
        using var cts = new CancellationTokenSource();
        ValueTask<int> cancelledReader = channel.ReadAsync(cts.Token);
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await cancelledReader);

        var alt = new Alternative(channel.Out.Offer(7), new Skip());
        Assert.Equal(1, alt.PriSelect());
        ValueTask<int> select = new Alternative(channel.Out.Offer(8)).PriSelectAsync();
        Assert.False(select.IsCompleted);
        Assert.Equal(8, await channel.ReadAsync());
        Assert.Equal(0, await select);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_BothSidesAlternating_ValuePassesOnce()
    {
        var channel = new One2OneChannel<int>();
        var otherIn = new One2OneChannel<int>();
        var otherOut = new One2OneChannel<int>();
        var reader = new Alternative(otherIn.In, channel.In);
        var writer = new Alternative(otherOut.Out.Offer(-1), channel.Out.Offer(21));

        ValueTask<int> readSelect = reader.PriSelectAsync();
        Assert.False(readSelect.IsCompleted);
        Assert.Equal(1, await writer.PriSelectAsync());
        Assert.Equal(1, await readSelect);
        Assert.Equal(21, channel.In.Read());

        // And the other way round: the writer waits first.
        channel.Out.Offer(22);
        ValueTask<int> writeSelect = writer.PriSelectAsync();
        Assert.False(writeSelect.IsCompleted);
        Assert.Equal(1, await reader.PriSelectAsync());
        Assert.Equal(22, channel.In.Read());
        Assert.Equal(1, await writeSelect);

        // Neither unchosen side moved anything.
        ValueTask<int> readOther = otherOut.ReadAsync();
        Assert.False(readOther.IsCompleted);
        await otherOut.WriteAsync(0);
        Assert.Equal(0, await readOther);
    }

    /// <summary>
    /// A process may alternate over both ends of one shared channel (say a worker that either
    /// takes a job from an Any2Any job channel or offers one back). With nobody else there, the
    /// select must park. Each time it parks its offer, the channel signals the process's own
    /// input end, so the select wakes itself, withdraws the offer, rescans and parks the offer
    /// again: it spins at full CPU instead of waiting. (An async select that parks returns a
    /// pending task; a spinning one never returns.)
    /// </summary>
    [Theory(Timeout = 20000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task PriSelectAsync_InputAndOutputGuardOnSameChannel_ParksUntilAPartnerComes(bool partnerIsWriter)
    {
        var channel = new Any2AnyChannel<int>();
        AltingChannelIn<int> input = channel.CreateIn();
        var alt = new Alternative(input, channel.CreateOut().Offer(1));

        AltThread<Task<int>> caller = AltThread.Start(() => alt.PriSelectAsync().AsTask());
        Task<int> select;
        try
        {
            // Only a bound to report a spinning select (which never returns) instead of hanging.
            select = await caller.Completion.WaitAsync(TimeSpan.FromSeconds(2));
        }
        catch (TimeoutException)
        {
            channel.Poison(); // stops the spinning select
            await caller.Completion;
            Assert.Fail("PriSelectAsync over both ends of one channel did not park within 2 s: it spins.");
            return;
        }

        Assert.False(select.IsCompleted, "Nobody else is on the channel: the select waits.");
        if (partnerIsWriter)
        {
            await channel.WriteAsync(5);
            Assert.Equal(0, await select);
            Assert.Equal(5, input.Read());
        }
        else
        {
            Assert.Equal(1, await channel.ReadAsync());
            Assert.Equal(1, await select);
        }
    }

    public static TheoryData<AltKind, int, bool, bool> OutputCases()
    {
        var data = new TheoryData<AltKind, int, bool, bool>();
        foreach (AltKind kind in Enum.GetValues<AltKind>())
        {
            foreach (int capacity in new[] { 0, 3 })
            {
                foreach (bool alternatingReaders in new[] { false, true })
                {
                    foreach (bool asyncFirst in new[] { false, true })
                    {
                        data.Add(kind, capacity, alternatingReaders, asyncFirst);
                    }
                }
            }
        }

        return data;
    }

    /// <summary>
    /// Every writer alternates over output guards on two channels of one kind, offering the same
    /// item on both: exactly one of them may deliver it. Any-writer kinds have three writers,
    /// each with its own <c>CreateOut()</c> ends. Readers are plain readers or alternate over
    /// both channels themselves (then both sides alternate); shared-reader kinds have several.
    /// Threads and async processes are mixed. Every item must be read exactly once.
    /// </summary>
    [Theory(Timeout = 60000)]
    [MemberData(nameof(OutputCases))]
    public async Task OutputGuard_WritersOfferEachItemOnTwoChannels_EveryItemReadExactlyOnce(AltKind kind, int capacity, bool alternatingReaders, bool asyncFirst)
    {
        const int itemsPerWriter = 2000;
        int writers = AltChannels.SharedWriter(kind) ? 3 : 1;
        int readers = AltChannels.SharedReader(kind) ? 2 : 1;
        CspChannel<int> a = AltChannels.Create<int>(kind, capacity);
        CspChannel<int> b = AltChannels.Create<int>(kind, capacity);
        var counter = new ItemCounter(writers * itemsPerWriter);
        int writersLeft = writers;

        void WriterDone()
        {
            if (Interlocked.Decrement(ref writersLeft) == 0)
            {
                a.Poison();
                b.Poison();
            }
        }

        var par = new Parallel();
        for (int w = 0; w < writers; w++)
        {
            int first = w * itemsPerWriter;
            AltingChannelOut<int> outA = AltChannels.OutFor(a, kind);
            AltingChannelOut<int> outB = AltChannels.OutFor(b, kind);
            var alt = new Alternative(outA, outB);
            if (asyncFirst ^ (w % 2 == 1))
            {
                par.AddProcess(async ct =>
                {
                    for (int v = first; v < first + itemsPerWriter; v++)
                    {
                        outA.Offer(v);
                        outB.Offer(v);
                        _ = v % 2 == 0 ? await alt.PriSelectAsync(ct) : await alt.FairSelectAsync(ct);
                    }

                    WriterDone();
                });
            }
            else
            {
                par.AddProcess(() =>
                {
                    for (int v = first; v < first + itemsPerWriter; v++)
                    {
                        outA.Offer(v);
                        outB.Offer(v);
                        _ = v % 2 == 0 ? alt.FairSelect() : alt.PriSelect();
                    }

                    WriterDone();
                });
            }
        }

        if (alternatingReaders)
        {
            for (int r = 0; r < readers; r++)
            {
                AddAlternatingReader(par, AltChannels.InFor(a, kind), AltChannels.InFor(b, kind), asyncFirst ^ (r % 2 == 1), counter);
            }

            if (AltChannels.SharedReader(kind))
            {
                AddPlainReader(par, a, asyncFirst, counter);
            }
        }
        else
        {
            for (int r = 0; r < readers; r++)
            {
                AddPlainReader(par, a, asyncFirst ^ (r % 2 == 1), counter);
                AddPlainReader(par, b, asyncFirst ^ (r % 2 == 0), counter);
            }
        }

        await par.RunAsync();
        counter.AssertEachExactlyOnce();
    }

    internal static void AddPlainReader(Parallel par, IChannelIn<int> channel, bool isAsync, ItemCounter counter)
    {
        if (isAsync)
        {
            par.AddProcess(async ct =>
            {
                await foreach (int v in channel.ReadAllAsync(ct))
                {
                    counter.Count(v);
                }
            });
        }
        else
        {
            par.AddProcess(() =>
            {
                foreach (int v in channel.ReadAll())
                {
                    counter.Count(v);
                }
            });
        }
    }

    /// <summary>
    /// A reader alternating over two input ends until both channels are poisoned (a poisoned
    /// guard is switched off with its precondition, so the other channel is still drained).
    /// </summary>
    internal static void AddAlternatingReader(Parallel par, InputEnd x, InputEnd y, bool isAsync, ItemCounter counter)
    {
        IChannelIn<int>[] ins = [x.In, y.In];
        var alt = new Alternative(x.Guard, y.Guard);
        bool[] open = [true, true];
        if (isAsync)
        {
            par.AddProcess(async ct =>
            {
                int n = 0;
                while (open[0] || open[1])
                {
                    int i = n++ % 3 == 0 ? await alt.FairSelectAsync(open, ct) : await alt.PriSelectAsync(open, ct);
                    ValueTask<int> read = ins[i].ReadAsync(ct);
                    if (!read.IsCompleted)
                    {
                        counter.Violation("After a select the chosen end's ReadAsync did not complete at once.");
                    }

                    try
                    {
                        counter.Count(await read);
                    }
                    catch (PoisonException)
                    {
                        open[i] = false;
                    }
                }
            });
        }
        else
        {
            par.AddProcess(() =>
            {
                int n = 0;
                while (open[0] || open[1])
                {
                    int i = n++ % 3 == 0 ? alt.PriSelect(open) : alt.FairSelect(open);
                    try
                    {
                        counter.Count(ins[i].Read());
                    }
                    catch (PoisonException)
                    {
                        open[i] = false;
                    }
                }
            });
        }
    }
}
