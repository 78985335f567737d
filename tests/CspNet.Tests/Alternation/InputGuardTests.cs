using CspNet.Tests.Alternation.Contract;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>Alternation over the reading ends of every channel kind.</summary>
public class InputGuardTests
{
    [Theory(Timeout = 10000)]
    [MemberData(nameof(AltData.KindsAndCapacities), MemberType = typeof(AltData))]
    public Task PriSelectAsync_WriterArrives_ChoosesItsGuardAndReadReturnsValueSynchronously(AltKind kind, int capacity)
    {
        TestSource a = TestSource.Local(kind, capacity);
        TestSource b = TestSource.Local(kind, capacity);
        return WriterArrivesScenario(a, a.CreateEnd(), b, b.CreateEnd());
    }

    /// <summary>
    /// Selects (PriSelectAsync, every third time FairSelectAsync) over ends of <paramref name="a"/>
    /// and <paramref name="b"/> while nothing is there, then writes to one of them: the select
    /// chooses that end, and its read returns the value synchronously.
    /// </summary>
    internal static async Task WriterArrivesScenario(TestSource a, InputEnd inA, TestSource b, InputEnd inB)
    {
        var alt = new Alternative(inA.Guard, inB.Guard);
        for (int n = 0; n < 40; n++)
        {
            ValueTask<int> select = n % 3 == 0 ? alt.FairSelectAsync() : alt.PriSelectAsync();
            Assert.False(select.IsCompleted, "Nothing to read yet.");
            TestSource target = n % 2 == 0 ? b : a;
            ValueTask write = target.WriteAsync(n);
            int chosen = await select;
            Assert.Equal(n % 2 == 0 ? 1 : 0, chosen);
            ValueTask<int> read = (chosen == 0 ? inA : inB).In.ReadAsync();
            Assert.True(read.IsCompletedSuccessfully, "The chosen value is held by the end.");
            Assert.Equal(n, await read);
            await write;
        }
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(AltData.Kinds), MemberType = typeof(AltData))]
    public async Task PriSelect_UnchosenReadyGuard_ConsumesNothing(AltKind kind)
    {
        CspChannel<int> a = AltChannels.Create<int>(kind);
        CspChannel<int> b = AltChannels.Create<int>(kind);
        AltingChannelIn<int> inA = AltChannels.InFor(a, kind);
        AltingChannelIn<int> inB = AltChannels.InFor(b, kind);
        ValueTask writeA = a.WriteAsync(1);
        ValueTask writeB = b.WriteAsync(2);
        var alt = new Alternative(inA, inB);

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(1, inA.Read());
        await writeA;
        Assert.False(writeB.IsCompleted, "Guard 1 was ready but not chosen: its writer is still parked.");

        // Any reader of b (not only this alternation) gets the value.
        Assert.Equal(2, await b.ReadAsync());
        await writeB;
    }

    /// <summary>
    /// On a shared-reader channel the value a selection chose is held by the process's own end:
    /// its next Read returns it at once, even with plain readers parked on the same channel and
    /// no writer left. (Were Read to go to the channel, it would queue behind them and hang.)
    /// </summary>
    [Theory(Timeout = 10000)]
    [InlineData(AltKind.One2Any, 0)]
    [InlineData(AltKind.Any2Any, 0)]
    [InlineData(AltKind.One2Any, 2)]
    [InlineData(AltKind.Any2Any, 2)]
    public async Task Read_AfterSelectWithPlainReadersCompeting_ReturnsHeldValueAtOnce(AltKind kind, int capacity)
    {
        CspChannel<int> channel = AltChannels.Create<int>(kind, capacity);
        AltingChannelIn<int> mine = channel.CreateIn();
        var alt = new Alternative(mine, new CSTimer());
        var selected = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        var go = new ManualResetEventSlim(false);

        AltThread<int> alternator = AltThread.Start(() =>
        {
            selected.SetResult(alt.PriSelect());
            go.Wait();
            return mine.Read();
        });

        await channel.WriteAsync(42);
        Assert.Equal(0, await selected.Task);

        // Competitors: two async readers and a thread reader, all parked on the empty channel.
        ValueTask<int> r1 = channel.ReadAsync();
        ValueTask<int> r2 = channel.CreateIn().ReadAsync();
        Assert.False(r1.IsCompleted || r2.IsCompleted, "The channel is empty: the competitors park.");
        AltThread<int> r3 = AltThread.Start(() => channel.Read());
        r3.WaitUntilBlockedOrEnded();

        go.Set();
        Assert.Equal(42, await alternator.Completion);

        // The competitors get exactly the three values written next, each one once.
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);
        await channel.WriteAsync(3);
        int[] got = [await r1, await r2, await r3.Completion];
        Array.Sort(got);
        Assert.Equal([1, 2, 3], got);
        go.Dispose();
    }

    /// <summary>
    /// Several processes alternate over their own ends of two channels of one kind (thread
    /// FairSelect, async PriSelectAsync, async FairSelectAsync), with plain readers on the same
    /// channels for shared-reader kinds, and thread and async writers. Every item is read exactly
    /// once; every async read after a select completes synchronously.
    /// </summary>
    [Theory(Timeout = 60000)]
    [MemberData(nameof(AltData.KindsAndCapacities), MemberType = typeof(AltData))]
    public Task Select_MixedAlternatingAndPlainReaders_EveryItemReadExactlyOnce(AltKind kind, int capacity) =>
        MixedReadersScenario(
            () => TestSource.Local(kind, capacity),
            writersPerChannel: AltChannels.SharedWriter(kind) ? 2 : 1,
            alternators: AltChannels.SharedReader(kind) ? 3 : 1,
            plainReaders: AltChannels.SharedReader(kind));

    /// <summary>
    /// Alternating readers (thread FairSelect, async PriSelectAsync, async FairSelectAsync), each
    /// over its own ends of two sources, and optionally plain readers on the same sources, with
    /// thread and async writers. Every item is read exactly once; every async read after a select
    /// completes synchronously.
    /// </summary>
    internal static async Task MixedReadersScenario(Func<TestSource> create, int writersPerChannel, int alternators, bool plainReaders)
    {
        const int itemsPerWriter = 5000;
        TestSource a = create();
        TestSource b = create();
        TestSource[] channels = [a, b];
        int writers = 2 * writersPerChannel;
        var counter = new ItemCounter(writers * itemsPerWriter);
        int writersLeft = writers;
        var par = new Parallel();

        for (int w = 0; w < writers; w++)
        {
            TestSource target = channels[w % 2];
            int first = w * itemsPerWriter;
            void Done()
            {
                if (Interlocked.Decrement(ref writersLeft) == 0)
                {
                    a.Poison();
                    b.Poison();
                }
            }

            if (w / 2 % 2 == 0)
            {
                par.AddProcess(() =>
                {
                    for (int v = first; v < first + itemsPerWriter; v++)
                    {
                        target.Write(v);
                    }

                    Done();
                });
            }
            else
            {
                par.AddProcess(async ct =>
                {
                    for (int v = first; v < first + itemsPerWriter; v++)
                    {
                        await target.WriteAsync(v, ct);
                    }

                    Done();
                });
            }
        }

        for (int r = 0; r < alternators; r++)
        {
            OutputGuardTests.AddAlternatingReader(par, a.CreateEnd(), b.CreateEnd(), isAsync: r % 3 != 0, counter);
        }

        if (plainReaders)
        {
            OutputGuardTests.AddPlainReader(par, a.CreateEnd().In, isAsync: false, counter);
            OutputGuardTests.AddPlainReader(par, b.CreateEnd().In, isAsync: true, counter);
        }

        await par.RunAsync();
        counter.AssertEachExactlyOnce();
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(AltData.Kinds), MemberType = typeof(AltData))]
    public async Task FairSelect_ThreadAlternatorWithParkedThreadWriters_TakesEachValueOnce(AltKind kind)
    {
        const int n = 500;
        CspChannel<int> a = AltChannels.Create<int>(kind);
        CspChannel<int> b = AltChannels.Create<int>(kind);
        AltingChannelIn<int> inA = AltChannels.InFor(a, kind);
        AltingChannelIn<int> inB = AltChannels.InFor(b, kind);

        AltThread<bool> wa = AltThread.Start(() =>
        {
            for (int v = 0; v < n; v++)
            {
                a.Write(v);
            }
        });
        AltThread<bool> wb = AltThread.Start(() =>
        {
            for (int v = n; v < 2 * n; v++)
            {
                b.Write(v);
            }
        });

        long sum = await AltThread.Start(() =>
        {
            var alt = new Alternative(inA, inB);
            long total = 0;
            int nextA = 0;
            int nextB = n;
            for (int k = 0; k < 2 * n; k++)
            {
                if (alt.FairSelect() == 0)
                {
                    int v = inA.Read();
                    Assert.Equal(nextA++, v);
                    total += v;
                }
                else
                {
                    int v = inB.Read();
                    Assert.Equal(nextB++, v);
                    total += v;
                }
            }

            return total;
        }).Completion;

        await wa.Completion;
        await wb.Completion;
        Assert.Equal((2L * n) * ((2L * n) - 1) / 2, sum);
    }

    /// <summary>
    /// A selection that chose an input end takes the value into the end. If the process selects
    /// again before reading (JCSP allows this: the channel simply stays ready), the first value
    /// must not be overwritten by a second one.
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task PriSelect_ChosenInputSelectedAgainBeforeRead_KeepsFirstValue()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(2));
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);
        var alt = new Alternative(channel.In, new Skip());

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(0, alt.PriSelect());

        Assert.Equal(1, channel.In.Read());
        ValueTask<int> second = channel.In.ReadAsync();
        Assert.True(second.IsCompleted, "The second value is still available.");
        Assert.Equal(2, await second);
    }
}
