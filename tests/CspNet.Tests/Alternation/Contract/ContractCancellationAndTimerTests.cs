namespace CspNet.Tests.Alternation.Contract;

/// <summary>Timers beside remote ends, and cancelled async selects over them: nothing is lost.</summary>
public class ContractCancellationAndTimerTests
{
    public static TheoryData<EndKind, AsyncSelectTests.SelectMethod> KindsAndMethods()
    {
        var data = new TheoryData<EndKind, AsyncSelectTests.SelectMethod>();
        foreach (EndKind kind in Enum.GetValues<EndKind>())
        {
            foreach (AsyncSelectTests.SelectMethod method in Enum.GetValues<AsyncSelectTests.SelectMethod>())
            {
                data.Add(kind, method);
            }
        }

        return data;
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public async Task PriSelect_NothingReadyBesideTimer_ReturnsTimerNoEarlierThanTimeoutAndTakesNothing(EndKind kind)
    {
        (TestSource source, InputEnd end) = TestSource.Open(kind);
        var timer = new CSTimer();
        var alt = new Alternative(end.Guard, timer);

        for (int n = 0; n < 6; n++)
        {
            int ms = n % 3;
            long start = System.Diagnostics.Stopwatch.GetTimestamp();
            timer.RelativeTimeOut(ms);
            int chosen = n % 2 == 0 ? await AltThread.Start(() => alt.PriSelect()).Completion : await alt.PriSelectAsync();
            double elapsed = AltTime.MillisecondsSince(start);
            Assert.Equal(1, chosen);
            Assert.True(elapsed >= ms, $"A timer of {ms} ms fired after {elapsed:F3} ms.");
        }

        // The timeouts took nothing: a value written now is chosen and read.
        timer.RelativeTimeOut(60000);
        ValueTask<int> select = alt.FairSelectAsync();
        ValueTask write = source.WriteAsync(7);
        Assert.Equal(0, await select);
        Assert.Equal(7, end.In.Read());
        await write;
    }

    /// <summary>A source that gets a value while the select waits with a far timeout: the end is chosen, thread or async.</summary>
    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public async Task PriSelect_EndReadyBeforeFarTimeout_ChoosesEnd(EndKind kind)
    {
        (TestSource source, InputEnd end) = TestSource.Open(kind);
        var timer = new CSTimer();
        var alt = new Alternative(timer, end.Guard);
        for (int n = 0; n < 10; n++)
        {
            timer.RelativeTimeOut(60000);
            Task<int> select = n % 2 == 0 ? AltThread.Start(() => alt.PriSelect()).Completion : alt.PriSelectAsync().AsTask();
            await source.WriteAsync(n);
            Assert.Equal(1, await select);
            Assert.Equal(n, await end.In.ReadAsync());
        }
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(KindsAndMethods))]
    public Task SelectAsync_CancelledWhileWaiting_ThrowsAndLaterValueStillAvailable(EndKind kind, AsyncSelectTests.SelectMethod method)
    {
        (TestSource source, InputEnd end) = TestSource.Open(kind);
        (TestSource other, InputEnd otherEnd) = TestSource.Open(kind, capacity: 1);
        return AsyncSelectTests.CancelledWhileWaitingScenario(method, source, end, other, otherEnd);
    }

    /// <summary>
    /// Cancelled while the reservation's request is on its way (held at the gate): the request is
    /// withdrawn, nothing is reserved, and the item stays first at the peer for the next select.
    /// Cancelled while the answer is on its way back (the peer has reserved): the end gives the
    /// item back before answering, so again the cancelled select has taken nothing.
    /// </summary>
    [Theory(Timeout = 10000)]
    [InlineData(0)]
    [InlineData(1)]
    public async Task SelectAsync_CancelledWhileReservationInFlight_ThrowsAndItemStaysAtPeer(int legsThrough)
    {
        var latency = new GatedLatency(legsThrough);
        var peer = new RemotePeer<int>(2, latency);
        DelayedChannelEnd<int> end = peer.CreateEnd();
        await peer.WriteAsync(1);
        await peer.WriteAsync(2);
        await end.ReadyKnown;
        var alt = new Alternative(end, new CSTimer());
        using var cts = new CancellationTokenSource();

        ValueTask<int> select = alt.PriSelectAsync(cts.Token);
        await latency.LegWaiting;
        await cts.CancelAsync();
        latency.Open();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await select);

        Assert.False(peer.HasReservation, "The cancelled select left a reservation behind.");
        Assert.Equal(2, peer.Count);
        Assert.Equal(0, await alt.PriSelectAsync());
        Assert.Equal(1, end.Read());
        Assert.Equal(2, await end.ReadAsync());
    }

    /// <summary>The cancellation race of <see cref="AsyncSelectTests"/>: writers cancel the readers' selects right before and after writing.</summary>
    [Theory(Timeout = 30000)]
    [MemberData(nameof(ContractData.Pairs), MemberType = typeof(ContractData))]
    public Task SelectAsync_CancellationRacingWithWrites_NothingLostOrDuplicated(EndKind kindA, EndKind kindB) =>
        AsyncSelectTests.CancellationRaceScenario(
            TestSource.Create(kindA, capacity: 2),
            TestSource.Create(kindB),
            writers: 4,
            readers: 2,
            itemsPerWriter: 2000);
}
