using CspNet.Tests.Alternation.Contract;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>Which guard PriSelect, FairSelect and Select choose when several are ready.</summary>
public class SelectOrderTests
{
    private static One2OneChannel<int>[] BufferedChannels(int count, int capacity)
    {
        var channels = new One2OneChannel<int>[count];
        for (int i = 0; i < count; i++)
        {
            channels[i] = new One2OneChannel<int>(new FifoBuffer<int>(capacity));
        }

        return channels;
    }

    private static Guard[] Ins(IEnumerable<CspChannel<int>> channels, params Guard[] extra) =>
        [.. channels.Select(c => (Guard)c.In), .. extra];

    [Fact(Timeout = 10000)]
    public async Task PriSelect_SeveralBufferedGuardsReady_ChoosesLowestReadyIndexEachTime()
    {
        One2OneChannel<int>[] channels = BufferedChannels(5, 2);
        await channels[4].WriteAsync(40);
        await channels[1].WriteAsync(10);
        await channels[3].WriteAsync(30);
        await channels[1].WriteAsync(11);
        var alt = new Alternative(Ins(channels));

        var order = new List<(int Index, int Value)>();
        for (int k = 0; k < 4; k++)
        {
            int i = alt.PriSelect();
            order.Add((i, channels[i].In.Read()));
        }

        Assert.Equal([(1, 10), (1, 11), (3, 30), (4, 40)], order);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_SeveralParkedWritersReady_ChoosesLowestIndexAndLeavesOthersParked()
    {
        var channels = new[] { new One2OneChannel<int>(), new One2OneChannel<int>(), new One2OneChannel<int>(), new One2OneChannel<int>() };
        ValueTask w3 = channels[3].WriteAsync(3);
        ValueTask w1 = channels[1].WriteAsync(1);
        ValueTask w2 = channels[2].WriteAsync(2);
        Assert.False(w1.IsCompleted || w2.IsCompleted || w3.IsCompleted, "Rendezvous writers park until a reader comes.");
        var alt = new Alternative(Ins(channels));

        Assert.Equal(1, alt.PriSelect());
        await w1;
        Assert.False(w2.IsCompleted, "An unchosen guard takes nothing: writer 2 is still parked.");
        Assert.False(w3.IsCompleted, "An unchosen guard takes nothing: writer 3 is still parked.");
        Assert.Equal(1, channels[1].In.Read());

        Assert.Equal(2, alt.PriSelect());
        await w2;
        Assert.False(w3.IsCompleted);
        Assert.Equal(2, channels[2].In.Read());

        Assert.Equal(3, alt.PriSelect());
        await w3;
        Assert.Equal(3, channels[3].In.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_SeveralGuardsReady_ChoosesLowestIndex()
    {
        One2OneChannel<int>[] channels = BufferedChannels(3, 1);
        await channels[2].WriteAsync(2);
        await channels[1].WriteAsync(1);
        var alt = new Alternative(Ins(channels));

        Assert.Equal(1, await alt.PriSelectAsync());
        Assert.Equal(1, await channels[1].In.ReadAsync());
        Assert.Equal(2, await alt.PriSelectAsync());
        Assert.Equal(2, await channels[2].In.ReadAsync());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_SkipLastAndNothingElseReady_ReturnsSkipIndexAndConsumesNothing()
    {
        var rendezvous = new One2OneChannel<int>();
        var buffered = new One2OneChannel<int>(new FifoBuffer<int>(1));
        var alt = new Alternative(rendezvous.In, buffered.In, new Skip());

        for (int k = 0; k < 100; k++)
        {
            Assert.Equal(2, alt.PriSelect());
        }

        // Nothing was taken or held: values written now are read in full.
        ValueTask pending = rendezvous.WriteAsync(7);
        Assert.False(pending.IsCompleted);
        await buffered.WriteAsync(8);
        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(7, rendezvous.In.Read());
        await pending;
        Assert.Equal(1, alt.PriSelect());
        Assert.Equal(8, buffered.In.Read());
        Assert.Equal(2, alt.PriSelect());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_SkipFirstWithInputReady_ChoosesSkipAndLeavesInput()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
        await channel.WriteAsync(5);
        var alt = new Alternative(new Skip(), channel.In);

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(5, await channel.ReadAsync());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_ReadyInputsBeforeExpiredTimerAndSkip_ChoosesInOrder()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
        await channel.WriteAsync(5);
        var timer = new CSTimer();
        timer.RelativeTimeOut(0);
        var alt = new Alternative(channel.In, timer, new Skip());

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(5, channel.In.Read());
        Assert.Equal(1, alt.PriSelect());
        timer.ClearTimeOut();
        Assert.Equal(2, alt.PriSelect());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_OutputGuardFirstAndInputReady_ChoosesOutputGuard()
    {
        var output = new One2OneChannel<int>(new FifoBuffer<int>(1));
        var input = new One2OneChannel<int>(new FifoBuffer<int>(1));
        await input.WriteAsync(1);
        var alt = new Alternative(output.Out.Offer(42), input.In);

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(42, await output.ReadAsync());
        Assert.Equal(1, await input.ReadAsync());
    }

    [Fact(Timeout = 10000)]
    public async Task Select_SeveralGuardsReady_ChoosesAReadyGuard()
    {
        One2OneChannel<int>[] channels = BufferedChannels(4, 1);
        await channels[3].WriteAsync(3);
        await channels[1].WriteAsync(1);
        var alt = new Alternative(Ins(channels));

        int first = alt.Select();
        Assert.Contains(first, new[] { 1, 3 });
        Assert.Equal(first, channels[first].In.Read());
        int second = await alt.SelectAsync();
        Assert.Equal(4 - first, second);
        Assert.Equal(second, channels[second].In.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task FairSelect_AllGuardsReady_StartsAfterLastChosenGuard()
    {
        const int k = 5;
        var channels = new One2OneChannel<int>[k];
        for (int i = 0; i < k; i++)
        {
            channels[i] = new One2OneChannel<int>();
        }

        var alt = new Alternative(Ins(channels));

        // Only guard 2 is ready: it is chosen, so the next search starts at guard 3.
        ValueTask first = channels[2].WriteAsync(100);
        Assert.Equal(2, alt.FairSelect());
        Assert.Equal(100, channels[2].In.Read());
        await first;

        var writes = new Task[k];
        for (int i = 0; i < k; i++)
        {
            writes[i] = channels[i].WriteAsync(i).AsTask();
            Assert.False(writes[i].IsCompleted, "Every writer is parked before the selections start.");
        }

        var chosen = new List<int>();
        for (int n = 0; n < k; n++)
        {
            int i = alt.FairSelect();
            chosen.Add(i);
            Assert.Equal(i, channels[i].In.Read());
        }

        Assert.Equal([3, 4, 0, 1, 2], chosen);
        await Task.WhenAll(writes);
    }

    [Fact(Timeout = 10000)]
    public async Task FairSelectAsync_AllGuardsReady_RoundRobin()
    {
        const int k = 4;
        const int perChannel = 50;
        One2OneChannel<int>[] channels = BufferedChannels(k, perChannel);
        for (int i = 0; i < k; i++)
        {
            for (int j = 0; j < perChannel; j++)
            {
                await channels[i].WriteAsync((i * 1000) + j);
            }
        }

        var alt = new Alternative(Ins(channels));
        for (int s = 0; s < k * perChannel; s++)
        {
            int i = await alt.FairSelectAsync();
            Assert.Equal(s % k, i);
            Assert.Equal((i * 1000) + (s / k), await channels[i].In.ReadAsync());
        }
    }

    /// <summary>More guards than one 64-bit ready word: selection across word boundaries.</summary>
    [Fact(Timeout = 20000)]
    public async Task FairSelectAndPriSelect_MoreThan64Guards_ChooseCorrectlyAcrossWords()
    {
        const int k = 150;
        One2OneChannel<int>[] channels = BufferedChannels(k, 2);
        var alt = new Alternative(Ins(channels, new CSTimer()));

        // PriSelect: the lowest ready index, wherever it sits.
        int[] ready = [149, 64, 128, 63, 0, 127, 65];
        foreach (int i in ready)
        {
            await channels[i].WriteAsync(i);
        }

        var chosen = new List<int>();
        for (int n = 0; n < ready.Length; n++)
        {
            int i = alt.PriSelect();
            chosen.Add(i);
            Assert.Equal(i, channels[i].In.Read());
        }

        Assert.Equal(ready.Order(), chosen);

        // FairSelect with every guard ready: round robin through all words, twice.
        for (int i = 0; i < k; i++)
        {
            await channels[i].WriteAsync(i);
            await channels[i].WriteAsync(i);
        }

        // The last choice was guard 149, so the search starts at the timer (never ready) and wraps to 0.
        for (int n = 0; n < 2 * k; n++)
        {
            int i = alt.FairSelect();
            Assert.Equal(n % k, i);
            Assert.Equal(i, channels[i].In.Read());
        }

        // An async select parked on all of them wakes for a guard in the last word, then the first.
        foreach (int i in new[] { 140, 3, 70 })
        {
            ValueTask<int> select = alt.FairSelectAsync();
            Assert.False(select.IsCompleted);
            await channels[i].WriteAsync(i);
            Assert.Equal(i, await select);
            Assert.Equal(i, channels[i].In.Read());
        }
    }

    /// <summary>
    /// A StressedAlt (JCSP) with one channel per writer: k writers, half threads and half async
    /// processes, write continuously, each to its own buffered channel. Selections start once
    /// every buffer is full, so every guard stays ready for the first k * capacity selections
    /// whatever the writers do meanwhile; over those, every window of k consecutive FairSelect
    /// calls chooses each guard exactly once, and each channel's values arrive in order.
    /// </summary>
    [Theory(Timeout = 60000)]
    [InlineData(false)]
    [InlineData(true)]
    public Task FairSelect_StressedAltWithAlwaysReadyWriters_EachGuardExactlyOncePerWindow(bool asyncSelect)
    {
        const int capacity = 4000;
        TestSource[] sources = [.. Enumerable.Range(0, 6).Select(_ => TestSource.Local(AltKind.One2One, capacity))];
        return StressedAltScenario(sources, capacity, asyncSelect);
    }

    /// <summary>
    /// The StressedAlt above over any sources, each buffered with <paramref name="capacity"/>.
    /// Selections start once every buffer is full and every end knows it is ready
    /// (<see cref="TestSource.ReadyKnown"/>): every window of k consecutive FairSelect calls then
    /// chooses each guard exactly once, and each source's values arrive in order.
    /// </summary>
    internal static async Task StressedAltScenario(TestSource[] sources, int capacity, bool asyncSelect)
    {
        int k = sources.Length;
        const int stride = 1 << 24;
        InputEnd[] ends = [.. sources.Select(s => s.CreateEnd())];
        var full = new TaskCompletionSource[k];
        for (int i = 0; i < k; i++)
        {
            full[i] = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }

        var writers = new Parallel();
        for (int w = 0; w < k; w++)
        {
            int me = w;
            if (w % 2 == 0)
            {
                writers.AddProcess(() =>
                {
                    try
                    {
                        for (int n = 0; ; n++)
                        {
                            sources[me].Write((me * stride) + n);
                            if (n == capacity - 1)
                            {
                                full[me].SetResult();
                            }
                        }
                    }
                    catch (PoisonException)
                    {
                    }
                });
            }
            else
            {
                writers.AddProcess(async ct =>
                {
                    try
                    {
                        for (int n = 0; ; n++)
                        {
                            await sources[me].WriteAsync((me * stride) + n, ct);
                            if (n == capacity - 1)
                            {
                                full[me].SetResult();
                            }
                        }
                    }
                    catch (PoisonException)
                    {
                    }
                });
            }
        }

        Task writing = writers.RunAsync();
        await Task.WhenAll(full.Select(f => f.Task));
        await Task.WhenAll(ends.Select(TestSource.ReadyKnown));

        var alt = new Alternative([.. ends.Select(e => e.Guard)]);
        var chosen = new int[k * capacity];
        var next = new int[k];
        int outOfOrder = 0;
        if (asyncSelect)
        {
            for (int s = 0; s < chosen.Length; s++)
            {
                int i = await alt.FairSelectAsync();
                chosen[s] = i;
                if (await ends[i].In.ReadAsync() != (i * stride) + next[i]++)
                {
                    outOfOrder++;
                }
            }
        }
        else
        {
            await AltThread.Start(() =>
            {
                for (int s = 0; s < chosen.Length; s++)
                {
                    int i = alt.FairSelect();
                    chosen[s] = i;
                    if (ends[i].In.Read() != (i * stride) + next[i]++)
                    {
                        outOfOrder++;
                    }
                }
            }).Completion;
        }

        foreach (TestSource source in sources)
        {
            source.Poison();
        }

        await writing;

        Assert.Equal(0, outOfOrder);
        for (int window = 0; window + k <= chosen.Length; window++)
        {
            var seen = new bool[k];
            for (int s = window; s < window + k; s++)
            {
                Assert.False(seen[chosen[s]], $"Guard {chosen[s]} was chosen twice in the window starting at selection {window}.");
                seen[chosen[s]] = true;
            }
        }

        // FairSelect starts after the guard chosen last (none at first), so it is plain round robin.
        for (int s = 0; s < chosen.Length; s++)
        {
            Assert.Equal(s % k, chosen[s]);
        }
    }
}
