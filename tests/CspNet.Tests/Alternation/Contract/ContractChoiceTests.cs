namespace CspNet.Tests.Alternation.Contract;

/// <summary>
/// Choice over remote ends (<see cref="DelayedChannelEnd{T}"/>) and local ends alike: the
/// alternation scenarios of <see cref="InputGuardTests"/> and <see cref="SelectOrderTests"/> run
/// over every <see cref="EndKind"/>, and over a local and a remote end in one alternative.
/// </summary>
public class ContractChoiceTests
{
    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Pairs), MemberType = typeof(ContractData))]
    public Task PriSelectAsync_WriterArrives_ChoosesItsGuardAndReadReturnsValueAtOnce(EndKind kindA, EndKind kindB)
    {
        (TestSource a, InputEnd inA) = TestSource.Open(kindA);
        (TestSource b, InputEnd inB) = TestSource.Open(kindB, capacity: 2);
        return InputGuardTests.WriterArrivesScenario(a, inA, b, inB);
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public async Task PriSelect_ThreadSelectorWriterArrives_ChoosesItsGuard(EndKind kind)
    {
        (TestSource a, InputEnd inA) = TestSource.Open(kind);
        (TestSource b, InputEnd inB) = TestSource.Open(kind);
        var alt = new Alternative(inA.Guard, inB.Guard, new CSTimer());

        for (int n = 0; n < 20; n++)
        {
            AltThread<int> selector = AltThread.Start(() =>
            {
                int i = alt.PriSelect();
                return i * 1000 + (i == 0 ? inA : inB).In.Read();
            });
            await (n % 2 == 0 ? a : b).WriteAsync(n);
            Assert.Equal((n % 2 * 1000) + n, await selector.Completion);
        }
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public async Task PriSelect_UnchosenReadyGuard_ConsumesNothing(EndKind kind)
    {
        (TestSource a, InputEnd inA) = TestSource.Open(kind);
        (TestSource b, InputEnd inB) = TestSource.Open(kind);
        ValueTask writeA = a.WriteAsync(1);
        ValueTask writeB = b.WriteAsync(2);
        await TestSource.ReadyKnown(inA);
        await TestSource.ReadyKnown(inB);
        var alt = new Alternative(inA.Guard, inB.Guard);

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(1, inA.In.Read());
        await writeA;
        Assert.False(writeB.IsCompleted, "Guard 1 was ready but not chosen: its writer still waits.");

        // Any reader of b, not only this alternation, gets the value.
        Assert.Equal(2, await b.CreateEnd().In.ReadAsync());
        await writeB;
    }

    /// <summary>A chosen end selected again before its read keeps the first value (TryCommit answers from the held value).</summary>
    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public async Task PriSelect_ChosenEndSelectedAgainBeforeRead_KeepsFirstValue(EndKind kind)
    {
        (TestSource source, InputEnd end) = TestSource.Open(kind, capacity: 2);
        await source.WriteAsync(1);
        await source.WriteAsync(2);
        var timer = new CSTimer();
        timer.RelativeTimeOut(60000);
        var alt = new Alternative(end.Guard, timer);

        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(0, await alt.PriSelectAsync());
        Assert.Equal(1, end.In.Read());
        Assert.Equal(2, await end.In.ReadAsync());
    }

    /// <summary>With every end known to be ready, PriSelect takes them in index order, remote ends as local ones.</summary>
    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public async Task PriSelect_SeveralEndsReady_ChoosesLowestReadyIndexEachTime(EndKind kind)
    {
        TestSource[] sources = [.. Enumerable.Range(0, 5).Select(_ => TestSource.Create(kind, capacity: 2))];
        InputEnd[] ends = [.. sources.Select(s => s.CreateEnd())];
        await sources[4].WriteAsync(40);
        await sources[1].WriteAsync(10);
        await sources[3].WriteAsync(30);
        await sources[1].WriteAsync(11);
        foreach (int i in new[] { 1, 3, 4 })
        {
            await TestSource.ReadyKnown(ends[i]);
        }

        var alt = new Alternative([.. ends.Select(e => e.Guard)]);
        var order = new List<(int Index, int Value)>();
        for (int k = 0; k < 4; k++)
        {
            int i = k % 2 == 0 ? alt.PriSelect() : await alt.PriSelectAsync();
            order.Add((i, ends[i].In.Read()));
        }

        Assert.Equal([(1, 10), (1, 11), (3, 30), (4, 40)], order);
    }

    /// <summary>Guards whose precondition is false are not enabled, so a remote one reserves nothing.</summary>
    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public async Task PriSelectAsync_ReadyEndWithFalsePrecondition_NotChosenAndConsumesNothing(EndKind kind)
    {
        (TestSource ready, InputEnd readyEnd) = TestSource.Open(kind);
        (TestSource other, InputEnd otherEnd) = TestSource.Open(kind);
        ValueTask parked = ready.WriteAsync(1);
        await TestSource.ReadyKnown(readyEnd);
        var alt = new Alternative(readyEnd.Guard, otherEnd.Guard);

        for (int n = 0; n < 20; n++)
        {
            ValueTask<int> select = n % 2 == 0 ? alt.PriSelectAsync([false, true]) : alt.FairSelectAsync([false, true]);
            Assert.False(select.IsCompleted, "The only ready guard is switched off, so the select waits.");
            ValueTask write = other.WriteAsync(n);
            Assert.Equal(1, await select);
            Assert.Equal(n, otherEnd.In.Read());
            await write;
        }

        Assert.False(parked.IsCompleted, "The switched-off guard took nothing: its writer still waits.");
        Assert.Equal(0, alt.PriSelect([true, true]));
        Assert.Equal(1, readyEnd.In.Read());
        await parked;
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public async Task FairSelect_Preconditions_OnlyTrueGuardsTakenInTurn(EndKind kind)
    {
        const int k = 4;
        TestSource[] sources = [.. Enumerable.Range(0, k).Select(_ => TestSource.Create(kind, capacity: 10))];
        InputEnd[] ends = [.. sources.Select(s => s.CreateEnd())];
        for (int i = 0; i < k; i++)
        {
            for (int j = 0; j < 10; j++)
            {
                await sources[i].WriteAsync((i * 100) + j);
            }

            await TestSource.ReadyKnown(ends[i]);
        }

        var alt = new Alternative([.. ends.Select(e => e.Guard)]);
        bool[] pre = [true, false, true, false];
        var chosen = new List<int>();
        for (int n = 0; n < 6; n++)
        {
            int i = n % 2 == 0 ? alt.FairSelect(pre) : await alt.FairSelectAsync(pre);
            chosen.Add(i);
            Assert.Equal((i * 100) + (n / 2), ends[i].In.Read());
        }

        Assert.Equal([0, 2, 0, 2, 0, 2], chosen);
        Assert.Equal(100, ends[1].In.Read());
        Assert.Equal(300, await ends[3].In.ReadAsync());
    }

    /// <summary>The mixed-readers scenario of <see cref="InputGuardTests"/>: alternating and plain readers share two sources of each kind.</summary>
    [Theory(Timeout = 30000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public Task Select_MixedAlternatingAndPlainReaders_EveryItemReadExactlyOnce(EndKind kind) =>
        InputGuardTests.MixedReadersScenario(() => TestSource.Create(kind, capacity: 2), writersPerChannel: 2, alternators: 3, plainReaders: true);
}
