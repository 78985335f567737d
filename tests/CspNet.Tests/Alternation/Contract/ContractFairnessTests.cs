namespace CspNet.Tests.Alternation.Contract;

/// <summary>FairSelect over remote ends that stay ready: the StressedAlt of <see cref="SelectOrderTests"/>.</summary>
public class ContractFairnessTests
{
    /// <summary>
    /// Every end knows its peer is ready before the selections start, so each signals as soon as a
    /// selection enables it and FairSelect tries them from its start index: every window of k
    /// picks chooses each end once, latency or not (the reservation's latency only delays the pick).
    /// </summary>
    [Theory(Timeout = 30000)]
    [InlineData(EndKind.Remote, false)]
    [InlineData(EndKind.Remote, true)]
    [InlineData(EndKind.RemoteLagging, false)]
    [InlineData(EndKind.RemoteLagging, true)]
    public Task FairSelect_AlwaysReadyRemoteEnds_EachGuardExactlyOncePerWindow(EndKind kind, bool asyncSelect)
    {
        const int capacity = 500;
        TestSource[] sources = [.. Enumerable.Range(0, 4).Select(_ => TestSource.Create(kind, capacity))];
        return SelectOrderTests.StressedAltScenario(sources, capacity, asyncSelect);
    }

    /// <summary>
    /// Readiness that arrives late (the end learns of it only from the peer's delayed push, not at
    /// enable time) guarantees less: a pick goes to an end whose push has arrived, in FairSelect
    /// order among those. What still holds: every item is read once, in order.
    /// </summary>
    [Theory(Timeout = 30000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task FairSelect_ReadinessArrivesLate_EveryItemReadOnceInOrder(bool asyncSelect)
    {
        const int k = 3;
        const int perEnd = 400;
        var peers = new RemotePeer<int>[k];
        var ends = new DelayedChannelEnd<int>[k];
        for (int i = 0; i < k; i++)
        {
            peers[i] = new RemotePeer<int>(perEnd, Latency.Random);
            ends[i] = peers[i].CreateEnd(signalKnownReadinessOnEnable: false);
            for (int n = 0; n < perEnd; n++)
            {
                await peers[i].WriteAsync((i * perEnd) + n);
            }
        }

        var alt = new Alternative(ends);
        var next = new int[k];
        Func<Task> run = async () =>
        {
            for (int s = 0; s < k * perEnd; s++)
            {
                int i = asyncSelect ? await alt.FairSelectAsync() : alt.FairSelect();
                Assert.Equal((i * perEnd) + next[i]++, asyncSelect ? await ends[i].ReadAsync() : ends[i].Read());
            }
        };
        await (asyncSelect ? run() : AltThread.Start(() => run().GetAwaiter().GetResult()).Completion);

        Assert.All(next, n => Assert.Equal(perEnd, n));
        Assert.All(peers, p => Assert.Equal(0, p.Count));
    }
}
