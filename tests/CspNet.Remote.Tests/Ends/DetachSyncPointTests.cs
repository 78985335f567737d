using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Ends;

/// <summary>
/// Detaching a party of a barrier, or a user of a bucket, that another program hosts
/// (<see cref="CspNode.DetachAsync(NamedBarrier, CancellationToken)"/>,
/// <see cref="CspNode.DetachAsync(NamedBucket, CancellationToken)"/>): the party resigns, a Sync or
/// Fall it had waiting is withdrawn (its arrival never counts), and later use throws
/// <see cref="ObjectDisposedException"/>.
/// </summary>
public sealed class DetachSyncPointTests
{
    private const int Timeout = 60_000;

    // Long enough for any Sync that should open on a loaded machine; a barrier that stays shut
    // for it is shut for good (the test then fails rather than hangs).
    private static readonly TimeSpan Opens = TimeSpan.FromSeconds(20);

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_BarrierParty_TheOthersSyncWithOnePartyFewerAndItsProgramMayLeave()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode stays = await system.NodeAsync("stays");
        CspNode leaves = await system.NodeAsync("leaves");
        NamedBarrier atHome = await home.GetBarrierAsync("phase", enrolled: 3);
        NamedBarrier staying = await stays.GetBarrierAsync("phase");
        NamedBarrier leaving = await leaves.GetBarrierAsync("phase");

        // All three once, then the third party resigns.
        await Task.WhenAll(atHome.SyncAsync().AsTask(), staying.SyncAsync().AsTask(), leaving.SyncAsync().AsTask()).WaitAsync(Opens);
        await leaves.DetachAsync(leaving);

        // Two parties open it now; its program leaving afterwards is no lost party.
        await Task.WhenAll(atHome.SyncAsync().AsTask(), staying.SyncAsync().AsTask()).WaitAsync(Opens);
        await leaves.DisposeAsync();
        await Task.WhenAll(atHome.SyncAsync().AsTask(), staying.SyncAsync().AsTask()).WaitAsync(Opens);
    }

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_BarrierSyncWaiting_SyncThrowsAndItsArrivalNeverCounts()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode stays = await system.NodeAsync("stays");
        CspNode leaves = await system.NodeAsync("leaves");
        NamedBarrier atHome = await home.GetBarrierAsync("withdrawn", enrolled: 3);
        NamedBarrier staying = await stays.GetBarrierAsync("withdrawn");
        NamedBarrier leaving = await leaves.GetBarrierAsync("withdrawn");

        // Two of three have arrived. Had the leaving party's arrival counted when it resigned, the
        // barrier (two parties now) would open for those two, and the home's Sync would then wait
        // alone for ever.
        Task stayingSync = staying.SyncAsync().AsTask();
        Task leavingSync = leaving.SyncAsync().AsTask();
        await leaves.DetachAsync(leaving);

        ObjectDisposedException withdrawn = await Assert.ThrowsAsync<ObjectDisposedException>(() => leavingSync);
        Assert.Contains("barrier 'withdrawn'", withdrawn.Message, StringComparison.Ordinal);
        Assert.Contains("arrival was withdrawn", withdrawn.Message, StringComparison.Ordinal);
        await Task.WhenAll(atHome.SyncAsync().AsTask(), stayingSync).WaitAsync(Opens);
    }

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_BucketFallWaiting_FallThrowsAndTheFlushDoesNotCountIt()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode stays = await system.NodeAsync("stays");
        CspNode leaves = await system.NodeAsync("leaves");
        NamedBucket atHome = await home.GetBucketAsync("pool");
        NamedBucket staying = await stays.GetBucketAsync("pool");
        NamedBucket leaving = await leaves.GetBucketAsync("pool");

        Task leavingFall = leaving.FallAsync().AsTask();
        await leaves.DetachAsync(leaving);
        ObjectDisposedException climbed = await Assert.ThrowsAsync<ObjectDisposedException>(() => leavingFall);

        // The flush that the staying user's Fall waits for (asked over the same link, so it
        // reaches the home after that Fall) releases that one alone.
        Task stayingFall = staying.FallAsync().AsTask();
        int released = await staying.FlushAsync();
        await stayingFall.WaitAsync(Opens);

        Assert.Equal(1, released);
        Assert.Contains("bucket 'pool'", climbed.Message, StringComparison.Ordinal);
        Assert.Equal(0, await atHome.FlushAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_DetachedBarrierAndBucket_LaterUseThrowsAndHostedOnesAreRefused()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode user = await system.NodeAsync("user");
        NamedBarrier hostedBarrier = await home.GetBarrierAsync("gate", enrolled: 2);
        NamedBucket hostedBucket = await home.GetBucketAsync("tub");
        NamedBarrier barrier = await user.GetBarrierAsync("gate");
        NamedBucket bucket = await user.GetBucketAsync("tub");

        await user.DetachAsync(barrier);
        await user.DetachAsync(bucket);
        await user.DetachAsync(barrier); // twice: nothing more

        ObjectDisposedException sync = await Assert.ThrowsAsync<ObjectDisposedException>(async () => await barrier.SyncAsync());
        Assert.Contains("getter", sync.Message, StringComparison.Ordinal);
        Assert.Throws<ObjectDisposedException>(barrier.Poison);
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await bucket.FallAsync());
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await bucket.FlushAsync());
        Assert.Throws<ObjectDisposedException>(bucket.Poison);

        ArgumentException barrierHere = await Assert.ThrowsAsync<ArgumentException>(() => home.DetachAsync(hostedBarrier));
        Assert.Contains("barrier 'gate'", barrierHere.Message, StringComparison.Ordinal);
        Assert.Equal("barrier", barrierHere.ParamName);
        ArgumentException bucketHere = await Assert.ThrowsAsync<ArgumentException>(() => home.DetachAsync(hostedBucket));
        Assert.Contains("bucket 'tub'", bucketHere.Message, StringComparison.Ordinal);
    }
}
