namespace CspNet.Tests.Alternation.Contract;

/// <summary>Poison and a lost peer meet alternation over remote ends.</summary>
public class ContractFailureTests
{
    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public Task PriSelect_PoisonedSource_ReturnsIndexAndReadThrowsPoison(EndKind kind)
    {
        (TestSource source, InputEnd end) = TestSource.Open(kind);
        return AltPoisonTests.PoisonedInputScenario(source, end);
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public Task PriSelect_PoisonedBufferedSource_DrainsValuesBeforePoison(EndKind kind)
    {
        (TestSource source, InputEnd end) = TestSource.Open(kind, capacity: 3);
        return AltPoisonTests.PoisonedBufferedInputScenario(source, end);
    }

    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.Kinds), MemberType = typeof(ContractData))]
    public Task PriSelectAsync_PoisonWhileWaiting_WakesWithGuardIndex(EndKind kind)
    {
        (TestSource source, InputEnd end) = TestSource.Open(kind);
        return AltPoisonTests.PoisonWhileWaitingScenario(source, end);
    }

    /// <summary>The peer is lost while a select (thread or async) waits on its end: the select throws the IOException.</summary>
    [Theory(Timeout = 10000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task PriSelect_PeerLostWhileWaiting_ThrowsIOException(bool asyncSelect)
    {
        var peer = new RemotePeer<int>(0, Latency.Random);
        DelayedChannelEnd<int> end = peer.CreateEnd();
        var never = new One2OneChannel<int>();
        var alt = new Alternative(never.In, end, new CSTimer());
        Task<int> select;
        if (asyncSelect)
        {
            ValueTask<int> parked = alt.PriSelectAsync();
            Assert.False(parked.IsCompleted);
            select = parked.AsTask();
        }
        else
        {
            AltThread<int> selector = AltThread.Start(() => alt.PriSelect());
            selector.WaitUntilBlockedOrEnded();
            select = selector.Completion;
        }

        peer.Lose();
        await Assert.ThrowsAsync<IOException>(() => select);
    }

    /// <summary>A lost peer fails every select that enables its end; with the end switched off the alternative works on.</summary>
    [Theory(Timeout = 10000)]
    [MemberData(nameof(ContractData.RemoteKinds), MemberType = typeof(ContractData))]
    public async Task PriSelect_PeerAlreadyLost_ThrowsIOExceptionAndAlternativeStaysUsable(EndKind kind)
    {
        var peer = new RemotePeer<int>(0, kind == EndKind.Remote ? Latency.None : Latency.Random);
        DelayedChannelEnd<int> end = peer.CreateEnd();
        var other = new One2OneChannel<int>(new FifoBuffer<int>(1));
        var alt = new Alternative(end, other.In);
        peer.Lose();

        await Assert.ThrowsAsync<IOException>(async () => await alt.PriSelectAsync());
        await Assert.ThrowsAsync<IOException>(() => AltThread.Start(() => alt.FairSelect()).Completion);
        await Assert.ThrowsAsync<IOException>(async () => await end.ReadAsync());

        await other.WriteAsync(3);
        Assert.Equal(1, alt.PriSelect([false, true]));
        Assert.Equal(3, other.In.Read());
    }

    /// <summary>
    /// An earlier end's reservation is in flight in the scan (held at the gate) when a later end's
    /// peer is lost. The later end is not enabled yet, so its loss cannot end the selection: the
    /// reservation completes, the earlier end is chosen, and the loss surfaces at the next selection
    /// that reaches the later end.
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_PeerLostWhileEarlierEndReserved_EarlierEndChosenAndLossSurfacesNext()
    {
        var latency = new GatedLatency();
        var slowPeer = new RemotePeer<int>(1, latency);
        DelayedChannelEnd<int> slow = slowPeer.CreateEnd();
        var lostPeer = new RemotePeer<int>(0, Latency.None);
        DelayedChannelEnd<int> doomed = lostPeer.CreateEnd();
        await slowPeer.WriteAsync(1);
        await slow.ReadyKnown;
        var alt = new Alternative(slow, doomed);

        ValueTask<int> select = alt.PriSelectAsync();
        await latency.LegWaiting;
        lostPeer.Lose();
        latency.Open();

        Assert.Equal(0, await select);
        Assert.Equal(1, slow.Read());
        Assert.False(slowPeer.HasReservation);
        await Assert.ThrowsAsync<IOException>(async () => await alt.PriSelectAsync());
    }

    /// <summary>A value chosen before the peer was lost is already local: the read returns it; the next read fails.</summary>
    [Fact(Timeout = 10000)]
    public async Task Read_PeerLostAfterChoice_ReturnsHeldValueThenThrowsIOException()
    {
        var peer = new RemotePeer<int>(1, Latency.Random);
        DelayedChannelEnd<int> end = peer.CreateEnd();
        await peer.WriteAsync(9);
        var alt = new Alternative(end);

        Assert.Equal(0, await alt.PriSelectAsync());
        peer.Lose();
        Assert.Equal(9, end.Read());
        await Assert.ThrowsAsync<IOException>(async () => await end.ReadAsync());
    }
}
