using CspNet.Tests.Alternation.Contract;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>Poison meets alternation: poisoned input guards, poisoned output guards, poison while waiting.</summary>
public class AltPoisonTests
{
    [Theory(Timeout = 10000)]
    [MemberData(nameof(AltData.Kinds), MemberType = typeof(AltData))]
    public Task PriSelect_PoisonedInput_ReturnsIndexAndReadThrowsPoison(AltKind kind)
    {
        TestSource channel = TestSource.Local(kind);
        return PoisonedInputScenario(channel, channel.CreateEnd());
    }

    /// <summary>A poisoned source makes its end ready: a select chooses it and the end's read throws PoisonException, again and again.</summary>
    internal static async Task PoisonedInputScenario(TestSource source, InputEnd end)
    {
        var never = new One2OneChannel<int>();
        var alt = new Alternative(never.In, end.Guard);
        source.Poison();

        Assert.Equal(1, alt.PriSelect());
        Assert.Throws<PoisonException>(() => end.In.Read());
        Assert.Equal(1, await alt.FairSelectAsync());
        await Assert.ThrowsAsync<PoisonException>(async () => await end.In.ReadAsync());

        // Poison stays: the guard stays ready.
        Assert.Equal(1, alt.PriSelect());
        Assert.Throws<PoisonException>(() => end.In.Read());
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(AltData.Kinds), MemberType = typeof(AltData))]
    public Task PriSelect_PoisonedBufferedInput_DrainsValuesBeforePoison(AltKind kind)
    {
        TestSource channel = TestSource.Local(kind, 3);
        return PoisonedBufferedInputScenario(channel, channel.CreateEnd());
    }

    /// <summary>A poisoned source with buffered values: selects choose its end for each value, then for the poison.</summary>
    internal static async Task PoisonedBufferedInputScenario(TestSource source, InputEnd end)
    {
        await source.WriteAsync(1);
        await source.WriteAsync(2);
        source.Poison();
        var alt = new Alternative(end.Guard);

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(1, end.In.Read());
        Assert.Equal(0, await alt.PriSelectAsync());
        Assert.Equal(2, await end.In.ReadAsync());
        Assert.Equal(0, alt.PriSelect());
        Assert.Throws<PoisonException>(() => end.In.Read());
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(AltData.Kinds), MemberType = typeof(AltData))]
    public Task PriSelectAsync_PoisonWhileWaiting_WakesWithGuardIndex(AltKind kind)
    {
        TestSource channel = TestSource.Local(kind);
        return PoisonWhileWaitingScenario(channel, channel.CreateEnd());
    }

    /// <summary>Poison reaches a select parked on the source's end: it wakes and chooses the end, whose read throws.</summary>
    internal static async Task PoisonWhileWaitingScenario(TestSource source, InputEnd end)
    {
        var never = new One2OneChannel<int>();
        var alt = new Alternative(never.In, new CSTimer(), end.Guard);

        ValueTask<int> select = alt.PriSelectAsync();
        Assert.False(select.IsCompleted, "Parked before the poison.");
        source.Poison();
        Assert.Equal(2, await select);
        await Assert.ThrowsAsync<PoisonException>(async () => await end.In.ReadAsync());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_ThreadWaitingWhenPoisoned_WakesWithGuardIndex()
    {
        var channel = new Any2AnyChannel<int>();
        AltingChannelIn<int> end = channel.CreateIn();
        var never = new One2OneChannel<int>();
        var alt = new Alternative(never.In, end);

        AltThread<int> selector = AltThread.Start(() =>
        {
            int i = alt.PriSelect();
            Assert.Throws<PoisonException>(() => end.Read());
            return i;
        });
        selector.WaitUntilBlockedOrEnded();

        // Poison from the writing side of a different end object: it reaches every end.
        channel.CreateOut().Poison();
        Assert.Equal(1, await selector.Completion);
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(AltData.KindsAndCapacities), MemberType = typeof(AltData))]
    public async Task PriSelect_OutputGuardOnPoisonedChannel_ThrowsPoisonAndStaysUsable(AltKind kind, int capacity)
    {
        CspChannel<int> channel = AltChannels.Create<int>(kind, capacity);
        AltingChannelOut<int> end = AltChannels.OutFor(channel, kind);
        var other = new One2OneChannel<int>(new FifoBuffer<int>(1));
        var alt = new Alternative(end.Offer(1), other.In);
        channel.Poison();

        Assert.Throws<PoisonException>(() => alt.PriSelect());
        await Assert.ThrowsAsync<PoisonException>(async () => await alt.PriSelectAsync());
        await Assert.ThrowsAsync<PoisonException>(async () => await AltThread.Start(() => alt.FairSelect()).Completion);

        // The alternative is idle again: with the poisoned guard switched off it selects normally.
        await other.WriteAsync(2);
        Assert.Equal(1, alt.PriSelect([false, true]));
        Assert.Equal(2, other.In.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_PoisonWhileOfferParked_ThrowsPoison()
    {
        var channel = new One2OneChannel<int>();
        var never = new One2OneChannel<int>();
        var alt = new Alternative(never.In, channel.Out.Offer(5));

        ValueTask<int> select = alt.PriSelectAsync();
        Assert.False(select.IsCompleted);
        channel.In.Poison();
        await Assert.ThrowsAsync<PoisonException>(async () => await select);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_ThreadWithOfferParkedWhenPoisoned_ThrowsPoison()
    {
        var channel = new Any2OneChannel<int>();
        AltingChannelOut<int> end = channel.CreateOut();
        var alt = new Alternative(end.Offer(5), new CSTimer());

        AltThread<int> selector = AltThread.Start(() => alt.PriSelect());
        selector.WaitUntilBlockedOrEnded();
        channel.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => selector.Completion);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_PoisonedInputWithFalsePrecondition_NotChosen()
    {
        var poisoned = new One2OneChannel<int>();
        poisoned.Poison();
        var live = new One2OneChannel<int>();
        var alt = new Alternative(poisoned.In, live.In, new Skip());

        Assert.Equal(2, alt.PriSelect([false, true, true]));
        ValueTask<int> select = alt.PriSelectAsync([false, true, false]);
        Assert.False(select.IsCompleted);
        await live.WriteAsync(3);
        Assert.Equal(1, await select);
        Assert.Equal(3, live.In.Read());
    }

    /// <summary>
    /// A network winds down on poison: writers alternate over output guards on two channels, a
    /// reader alternates over both; the reader poisons both channels after a fixed number of
    /// items, and every party ends with PoisonException (the writers from their select).
    /// </summary>
    [Fact(Timeout = 20000)]
    public async Task Select_ReaderPoisonsMidStream_AllAlternatingPartiesEnd()
    {
        var a = new Any2OneChannel<int>();
        var b = new Any2OneChannel<int>();
        int writerPoisons = 0;
        var par = new Parallel();
        for (int w = 0; w < 4; w++)
        {
            AltingChannelOut<int> outA = a.CreateOut();
            AltingChannelOut<int> outB = b.CreateOut();
            var alt = new Alternative(outA, outB);
            if (w % 2 == 0)
            {
                par.AddProcess(() =>
                {
                    try
                    {
                        for (int v = 0; ; v++)
                        {
                            outA.Offer(v);
                            outB.Offer(v);
                            alt.FairSelect();
                        }
                    }
                    catch (PoisonException)
                    {
                        Interlocked.Increment(ref writerPoisons);
                    }
                });
            }
            else
            {
                par.AddProcess(async ct =>
                {
                    try
                    {
                        for (int v = 0; ; v++)
                        {
                            outA.Offer(v);
                            outB.Offer(v);
                            await alt.PriSelectAsync(ct);
                        }
                    }
                    catch (PoisonException)
                    {
                        Interlocked.Increment(ref writerPoisons);
                    }
                });
            }
        }

        int read = 0;
        par.AddProcess(() =>
        {
            var alt = new Alternative(a.In, b.In);
            for (; read < 10000; read++)
            {
                _ = alt.FairSelect() == 0 ? a.In.Read() : b.In.Read();
            }

            a.Poison();
            b.Poison();
        });

        await par.RunAsync();
        Assert.Equal(10000, read);
        Assert.Equal(4, writerPoisons);
    }
}
