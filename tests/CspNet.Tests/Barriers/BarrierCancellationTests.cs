using Barrier = CspNet.Barrier;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Barriers;

/// <summary>
/// A cancelled <see cref="Barrier.SyncAsync"/> takes no part in the phase: the others keep
/// waiting until that process syncs again or resigns.
/// </summary>
public class BarrierCancellationTests
{
    [Fact(Timeout = 10_000)]
    public async Task SyncAsync_CancelledWhileWaiting_NotCountedAndPhaseWaitsForResync()
    {
        var barrier = new Barrier(3);
        using var cancellation = new CancellationTokenSource();
        Task cancelled = barrier.SyncAsync(cancellation.Token).AsTask();
        Task other = barrier.SyncAsync().AsTask();
        Assert.Equal(2, barrier.Waiting);

        await cancellation.CancelAsync();

        var exception = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled);
        Assert.Equal(cancellation.Token, exception.CancellationToken);
        Assert.Equal(1, barrier.Waiting);

        // The third process arrives: without the cancelled one's sync this is only 2 of 3.
        Task third = barrier.SyncAsync().AsTask();
        Assert.Equal(2, barrier.Waiting);
        Assert.False(other.IsCompleted);
        Assert.False(third.IsCompleted);

        // The cancelled process syncs again and completes the phase.
        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await Task.WhenAll(other, third);
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task SyncAsync_CancelledThenResign_ReleasesOthers()
    {
        var barrier = new Barrier(3);
        using var cancellation = new CancellationTokenSource();
        Task cancelled = barrier.SyncAsync(cancellation.Token).AsTask();
        Task thread = Party.OnThread(barrier.Sync);
        await Poll.UntilAsync(() => barrier.Waiting == 2, "two processes wait");

        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled);
        Assert.Equal(1, barrier.Waiting);

        // The third process arrives: had the cancelled sync counted, this would complete the phase.
        Task async = barrier.SyncAsync().AsTask();
        Assert.Equal(2, barrier.Waiting);
        Assert.False(thread.IsCompleted);
        Assert.False(async.IsCompleted);

        // The cancelled process leaves instead of syncing again: it was the last one missing.
        barrier.Resign();

        await Task.WhenAll(thread, async);
        Assert.Equal(2, barrier.Enrolled);
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task SyncAsync_CancelledWhileThreadWaits_ThreadKeepsWaitingUntilResync()
    {
        var barrier = new Barrier(2);
        Task thread = Party.OnThread(barrier.Sync);
        await Poll.UntilAsync(() => barrier.Waiting == 1, "the thread process waits");

        // The last arrival would complete the phase, so it cannot be cancelled while waiting; it
        // can only be cancelled before it arrives, and then it is not counted.
        using var cancellation = new CancellationTokenSource();
        await cancellation.CancelAsync();
        AtOnce.Cancelled(barrier.SyncAsync(cancellation.Token));
        Assert.Equal(1, barrier.Waiting);
        Assert.False(thread.IsCompleted);

        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await thread;
    }

    [Fact(Timeout = 10_000)]
    public async Task SyncAsync_CancelledAsyncAmongThreads_ThreadsWaitForResync()
    {
        var barrier = new Barrier(3);
        using var cancellation = new CancellationTokenSource();
        Task cancelled = barrier.SyncAsync(cancellation.Token).AsTask();
        Task thread = Party.OnThread(barrier.Sync);
        await Poll.UntilAsync(() => barrier.Waiting == 2, "the async and the thread process wait");

        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled);

        // A second thread arrives: 2 of 3 (the cancelled one is not counted).
        Task secondThread = Party.OnThread(barrier.Sync);
        await Poll.UntilAsync(() => barrier.Waiting == 2, "both thread processes wait");
        Assert.False(thread.IsCompleted);
        Assert.False(secondThread.IsCompleted);

        await barrier.SyncAsync();
        await Task.WhenAll(thread, secondThread);
    }

    [Fact]
    public void SyncAsync_AlreadyCancelledToken_CancelledAndNotCounted()
    {
        var barrier = new Barrier(2);
        using var cancellation = new CancellationTokenSource();
        cancellation.Cancel();

        var exception = AtOnce.Cancelled(barrier.SyncAsync(cancellation.Token));

        Assert.Equal(cancellation.Token, exception.CancellationToken);
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact]
    public void SyncAsync_AlreadyCancelledTokenOnOneEnrolled_CancelledNotPassed()
    {
        var barrier = new Barrier(1);
        using var cancellation = new CancellationTokenSource();
        cancellation.Cancel();

        AtOnce.Cancelled(barrier.SyncAsync(cancellation.Token));
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task SyncAsync_CancelledAfterPhaseCompleted_ReportsSuccess()
    {
        var barrier = new Barrier(2);
        using var cancellation = new CancellationTokenSource();
        Task first = barrier.SyncAsync(cancellation.Token).AsTask();
        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));

        await cancellation.CancelAsync();

        await first;
    }

    [Fact(Timeout = 10_000)]
    public async Task SyncAsync_CancelledWaiterReusedAcrossPhases_LaterSyncsUnaffected()
    {
        // A cancelled sync's internals are recycled; later syncs (with and without tokens) must
        // still count exactly once each.
        var barrier = new Barrier(2);
        for (int i = 0; i < 50; i++)
        {
            using var cancellation = new CancellationTokenSource();
            Task cancelled = barrier.SyncAsync(cancellation.Token).AsTask();
            await cancellation.CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled);
            Assert.Equal(0, barrier.Waiting);

            using var unused = new CancellationTokenSource();
            Task first = barrier.SyncAsync(unused.Token).AsTask();
            Assert.Equal(1, barrier.Waiting);
            Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
            await first;
        }
    }

    /// <summary>
    /// The token is cancelled by another thread at the moment the sync starts, so the
    /// cancellation lands anywhere in the call. Whatever the moment, the cancelled sync must not
    /// stay counted: once it has reported the cancellation, nobody is waiting.
    /// </summary>
    [Fact(Timeout = 20_000)]
    public async Task SyncAsync_CancelledConcurrentlyWithCall_NeverStaysCounted()
    {
        var barrier = new Barrier(2);

        int rounds = await Party.OnThread(() => CancellationRace.Run(
            token => barrier.SyncAsync(token).AsTask(),
            () => barrier.Waiting == 0,
            "nobody waiting",
            rounds: 100_000,
            milliseconds: 400,
            seed: 7));

        Assert.True(rounds > 0);

        // Still exact afterwards: two syncs make a phase.
        Task first = barrier.SyncAsync().AsTask();
        Assert.False(first.IsCompleted);
        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await first;
    }

    /// <summary>
    /// Race stress: async processes cancel their own syncs at random moments (before the call, or
    /// right after it while other processes may be completing the phase), and re-sync in the same
    /// phase when cancelled. Thread processes sync plainly. Every phase must complete with exactly
    /// one counted arrival per process: if a cancelled sync were counted, the phase would complete
    /// while its process is away, and the per-phase checks fail.
    /// </summary>
    [Theory(Timeout = 30_000)]
    [InlineData(1)]
    [InlineData(2)]
    public async Task SyncAsync_RandomCancellationsManyPhases_EveryPhaseExact(int seed)
    {
        const int ThreadParties = 2;
        const int AsyncParties = 4;
        const int Phases = 1_000;
        const int Parties = ThreadParties + AsyncParties;
        var barrier = new Barrier(Parties);
        var log = new PhaseLog(Phases, barrier);
        var processes = new List<Task>();
        int cancelledSyncs = 0;
        var seeds = new Random(seed);

        for (int i = 0; i < ThreadParties; i++)
        {
            processes.Add(Party.OnThread(() => log.Guard(() =>
            {
                for (int phase = 0; phase < Phases; phase++)
                {
                    log.Arrive(phase);
                    barrier.Sync();
                    log.Pass(phase, Parties);
                }
            })));
        }

        for (int i = 0; i < AsyncParties; i++)
        {
            var random = new Random(seeds.Next());
            processes.Add(Party.Async(() => log.GuardAsync(async () =>
            {
                for (int phase = 0; phase < Phases; phase++)
                {
                    log.Arrive(phase);
                    while (true)
                    {
                        using var cancellation = new CancellationTokenSource();
                        int choice = random.Next(8);
                        if (choice == 0)
                        {
                            await cancellation.CancelAsync();
                        }

                        Task sync = barrier.SyncAsync(cancellation.Token).AsTask();
                        if (choice is 1 or 2)
                        {
                            // Races with the other processes completing the phase right now.
                            cancellation.Cancel();
                        }

                        try
                        {
                            await sync;
                            break;
                        }
                        catch (OperationCanceledException)
                        {
                            Interlocked.Increment(ref cancelledSyncs);
                            log.CheckNotPassed(phase, "had its sync cancelled in");
                        }
                    }

                    log.Pass(phase, Parties);
                }
            })));
        }

        await Task.WhenAll(processes).WaitAsync(TimeSpan.FromSeconds(25));

        log.AssertNoViolations();
        Assert.True(cancelledSyncs > 0);
        for (int phase = 0; phase < Phases; phase++)
        {
            Assert.Equal(Parties, log.Passed(phase));
        }

        Assert.Equal(0, barrier.Waiting);
    }
}
