using Barrier = CspNet.Barrier;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Barriers;

/// <summary>Construction, properties, single phases, Enroll/Resign and misuse of <see cref="Barrier"/>.</summary>
public class BarrierTests
{
    [Fact]
    public void Constructor_Negative_ThrowsArgumentOutOfRange()
    {
        var exception = Assert.Throws<ArgumentOutOfRangeException>(() => new Barrier(-1));
        Assert.Equal("enrolled", exception.ParamName);
    }

    [Fact]
    public void Constructor_Default_NoneEnrolledNoneWaiting()
    {
        var barrier = new Barrier();
        Assert.Equal(0, barrier.Enrolled);
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact]
    public void Constructor_Count_EnrollsThatMany()
    {
        var barrier = new Barrier(5);
        Assert.Equal(5, barrier.Enrolled);
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task Sync_OneEnrolled_ReturnsImmediately()
    {
        var barrier = new Barrier(1);

        // On its own thread, so that a wrong implementation fails by timeout instead of hanging the run.
        await Party.OnThread(() =>
        {
            for (int i = 0; i < 100; i++)
            {
                barrier.Sync();
            }
        });

        Assert.Equal(0, barrier.Waiting);
    }

    [Fact]
    public void SyncAsync_OneEnrolled_CompletesSynchronously()
    {
        var barrier = new Barrier(1);
        using var cancellation = new CancellationTokenSource();
        for (int i = 0; i < 100; i++)
        {
            Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
            Assert.True(AtOnce.Succeeded(barrier.SyncAsync(cancellation.Token)));
        }
    }

    [Fact(Timeout = 10_000)]
    public async Task SyncAsync_TwoEnrolled_FirstWaitsForSecond()
    {
        var barrier = new Barrier(2);

        Task first = barrier.SyncAsync().AsTask();
        Assert.False(first.IsCompleted);
        Assert.Equal(1, barrier.Waiting);

        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await first;
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task Sync_ThreadAndAsyncParties_WaitingCountsParkedAndLastReleasesAll()
    {
        var barrier = new Barrier(3);

        Task thread = Party.OnThread(barrier.Sync);
        Task async = barrier.SyncAsync().AsTask();
        await Poll.UntilAsync(() => barrier.Waiting == 2, "the thread and the async process wait");
        Assert.False(thread.IsCompleted);
        Assert.False(async.IsCompleted);

        // The third arrival completes the phase and passes at once.
        await Party.OnThread(barrier.Sync);
        await Task.WhenAll(thread, async);
        Assert.Equal(0, barrier.Waiting);
        Assert.Equal(3, barrier.Enrolled);
    }

    [Fact(Timeout = 10_000)]
    public async Task Sync_NoneEnrolled_ThrowsInvalidOperationWithHelpfulMessage()
    {
        var barrier = new Barrier();

        var exception = Assert.Throws<InvalidOperationException>(barrier.Sync);
        Assert.Contains("0 enrolled", exception.Message, StringComparison.Ordinal);
        Assert.Contains("Enroll", exception.Message, StringComparison.Ordinal);
        Assert.Contains("Resign", exception.Message, StringComparison.Ordinal);

        var asyncException = await Assert.ThrowsAsync<InvalidOperationException>(async () => await barrier.SyncAsync());
        Assert.Contains("Enroll", asyncException.Message, StringComparison.Ordinal);

        // The misuse changed nothing: the barrier still works once a process is enrolled.
        Assert.Equal(0, barrier.Waiting);
        barrier.Enroll();
        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
    }

    [Fact(Timeout = 10_000)]
    public async Task SyncAsync_NoneEnrolled_ReturnsFaultedTaskInsteadOfThrowing()
    {
        // Like its peers (poison, cancellation), misuse is reported through the returned task, so
        // a caller that stores the task and awaits it later sees the error at the await.
        var barrier = new Barrier();
        using var cancellation = new CancellationTokenSource();

        ValueTask sync = default;
        Exception? thrownAtCall = Record.Exception(() => sync = barrier.SyncAsync(cancellation.Token));

        Assert.Null(thrownAtCall);
        Assert.True(sync.IsFaulted);
        var exception = await Assert.ThrowsAsync<InvalidOperationException>(() => sync.AsTask());
        Assert.Contains("0 enrolled", exception.Message, StringComparison.Ordinal);
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task Sync_AllResigned_ThrowsInvalidOperation()
    {
        var barrier = new Barrier(2);
        barrier.Resign();
        barrier.Resign();

        Assert.Throws<InvalidOperationException>(barrier.Sync);
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await barrier.SyncAsync());
    }

    [Fact(Timeout = 10_000)]
    public async Task Sync_MoreSyncsThanEnrolled_ExtraOneWaitsInNextPhase()
    {
        // A barrier cannot tell an extra process from an enrolled one that is already in the next
        // phase, so only "nobody enrolled" is detectable as misuse; with 2 enrolled, a third sync
        // simply opens the next phase and waits there.
        var barrier = new Barrier(2);
        Task first = barrier.SyncAsync().AsTask();
        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await first;

        Task third = barrier.SyncAsync().AsTask();
        Assert.False(third.IsCompleted);
        Assert.Equal(1, barrier.Waiting);
        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await third;
    }

    [Fact]
    public void Resign_NoneEnrolled_ThrowsInvalidOperation()
    {
        var barrier = new Barrier();
        var exception = Assert.Throws<InvalidOperationException>(barrier.Resign);
        Assert.Contains("Enroll", exception.Message, StringComparison.Ordinal);
        Assert.Equal(0, barrier.Enrolled);
    }

    [Fact]
    public void Resign_MoreThanEnrolled_ThrowsAndCountStaysZero()
    {
        var barrier = new Barrier(1);
        barrier.Resign();
        Assert.Throws<InvalidOperationException>(barrier.Resign);
        Assert.Equal(0, barrier.Enrolled);
    }

    [Fact]
    public void EnrollResign_UpdateEnrolled()
    {
        var barrier = new Barrier(1);
        barrier.Enroll();
        barrier.Enroll();
        Assert.Equal(3, barrier.Enrolled);
        barrier.Resign();
        Assert.Equal(2, barrier.Enrolled);
    }

    [Fact(Timeout = 10_000)]
    public async Task Resign_LastMissingProcess_ReleasesWaitingThreadAndAsyncParties()
    {
        var barrier = new Barrier(3);
        Task thread = Party.OnThread(barrier.Sync);
        Task async = barrier.SyncAsync().AsTask();
        await Poll.UntilAsync(() => barrier.Waiting == 2, "two processes wait");

        barrier.Resign();

        await Task.WhenAll(thread, async);
        Assert.Equal(2, barrier.Enrolled);
        Assert.Equal(0, barrier.Waiting);

        // The next phase needs exactly the two that remain.
        Task next = barrier.SyncAsync().AsTask();
        Assert.False(next.IsCompleted);
        await Party.OnThread(barrier.Sync);
        await next;
    }

    [Fact(Timeout = 10_000)]
    public async Task Resign_NotLastMissing_OthersKeepWaiting()
    {
        // 3 enrolled, 1 waits, 1 resigns: the phase still needs the third.
        var barrier = new Barrier(3);
        Task first = barrier.SyncAsync().AsTask();

        barrier.Resign();

        Assert.Equal(2, barrier.Enrolled);
        Assert.Equal(1, barrier.Waiting);
        Assert.False(first.IsCompleted);

        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await first;
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task Resign_TwoOfFourWhileOneWaits_PhaseNeedsTheFourth()
    {
        var barrier = new Barrier(4);
        Task first = Party.OnThread(barrier.Sync);
        await Poll.UntilAsync(() => barrier.Waiting == 1, "the thread process waits");

        barrier.Resign();
        Assert.Equal(1, barrier.Waiting);
        Assert.False(first.IsCompleted);

        Task second = barrier.SyncAsync().AsTask();
        Assert.Equal(2, barrier.Waiting);
        Assert.False(first.IsCompleted);
        Assert.False(second.IsCompleted);

        // The fourth resigns instead of syncing: it was the last one missing.
        barrier.Resign();
        await Task.WhenAll(first, second);
        Assert.Equal(2, barrier.Enrolled);
    }

    [Fact(Timeout = 10_000)]
    public async Task Resign_WhileNoneWaiting_ReleasesNothingAndNextPhaseNeedsFewer()
    {
        var barrier = new Barrier(2);
        barrier.Resign();
        Assert.Equal(0, barrier.Waiting);
        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await Party.OnThread(barrier.Sync);
    }

    [Fact(Timeout = 10_000)]
    public async Task Enroll_DuringPhase_PhaseWaitsForNewProcessToo()
    {
        var barrier = new Barrier(2);
        Task first = barrier.SyncAsync().AsTask();

        barrier.Enroll();

        // The arrival that would have completed the phase now waits for the new process.
        Task second = Party.OnThread(barrier.Sync);
        await Poll.UntilAsync(() => barrier.Waiting == 2, "two processes wait");
        Assert.False(first.IsCompleted);
        Assert.False(second.IsCompleted);

        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await Task.WhenAll(first, second);
        Assert.Equal(3, barrier.Enrolled);
    }

    [Fact(Timeout = 10_000)]
    public async Task Enroll_FromZero_SingleProcessThenPasses()
    {
        var barrier = new Barrier();
        barrier.Enroll();
        Assert.True(AtOnce.Succeeded(barrier.SyncAsync()));
        await Party.OnThread(barrier.Sync);
    }

    [Fact(Timeout = 10_000)]
    public async Task Sync_UnderParallel_ThreadAndAsyncProcessesMeetEachPhase()
    {
        const int Phases = 50;
        var barrier = new Barrier(2);
        var log = new PhaseLog(Phases, barrier);
        var parallel = new Parallel();
        parallel.AddProcess(() => log.Guard(() =>
        {
            for (int phase = 0; phase < Phases; phase++)
            {
                log.Arrive(phase);
                barrier.Sync();
                log.Pass(phase, 2);
            }
        }));
        parallel.AddProcess(_ => log.GuardAsync(async () =>
        {
            for (int phase = 0; phase < Phases; phase++)
            {
                log.Arrive(phase);
                await barrier.SyncAsync();
                log.Pass(phase, 2);
            }
        }));

        await parallel.RunAsync();

        log.AssertNoViolations();
        Assert.Equal(2, log.Passed(Phases - 1));
    }
}
