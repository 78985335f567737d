using Barrier = CspNet.Barrier;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Barriers;

/// <summary>
/// <see cref="Bucket"/>: processes that fall are held until a flush releases exactly those held;
/// cancelled falls leave the bucket; poison fails held and later falls.
/// </summary>
public class BucketTests
{
    [Fact]
    public void New_HoldsNobody()
    {
        var bucket = new Bucket();
        Assert.Equal(0, bucket.Holding);
    }

    [Fact]
    public void Flush_Empty_ReturnsZero()
    {
        var bucket = new Bucket();
        Assert.Equal(0, bucket.Flush());
        Assert.Equal(0, bucket.Flush());
    }

    [Fact(Timeout = 10_000)]
    public async Task FallAsync_HeldUntilFlush()
    {
        var bucket = new Bucket();
        Task fall = bucket.FallAsync().AsTask();

        // An async fall is held as soon as the call returns.
        Assert.Equal(1, bucket.Holding);
        Assert.False(fall.IsCompleted);

        Assert.Equal(1, bucket.Flush());
        await fall;
        Assert.Equal(0, bucket.Holding);
    }

    [Theory(Timeout = 10_000)]
    [InlineData(3, 0)]
    [InlineData(0, 4)]
    [InlineData(3, 4)]
    public async Task Flush_ThreadAndAsyncFallers_ReleasesExactlyThoseHeld(int threadFallers, int asyncFallers)
    {
        var bucket = new Bucket();
        var fallers = new List<Task>();
        for (int i = 0; i < asyncFallers; i++)
        {
            fallers.Add(bucket.FallAsync().AsTask());
            Assert.Equal(i + 1, bucket.Holding);
        }

        for (int i = 0; i < threadFallers; i++)
        {
            fallers.Add(Party.OnThread(bucket.Fall));
        }

        int held = threadFallers + asyncFallers;
        await Poll.UntilAsync(() => bucket.Holding == held, $"{held} processes are held");
        Assert.All(fallers, faller => Assert.False(faller.IsCompleted));

        Assert.Equal(held, bucket.Flush());

        await Task.WhenAll(fallers);
        Assert.Equal(0, bucket.Holding);
        Assert.Equal(0, bucket.Flush());
    }

    [Fact(Timeout = 10_000)]
    public async Task Flush_LaterFaller_HeldUntilNextFlush()
    {
        var bucket = new Bucket();
        Task first = bucket.FallAsync().AsTask();
        Assert.Equal(1, bucket.Flush());
        await first;

        Task second = Party.OnThread(bucket.Fall);
        await Poll.UntilAsync(() => bucket.Holding == 1, "the thread process is held");
        Assert.False(second.IsCompleted);

        Assert.Equal(1, bucket.Flush());
        await second;
    }

    [Fact(Timeout = 10_000)]
    public async Task Fall_SameThreadRepeatedly_HeldEachTime()
    {
        // One thread falls 20 times; each fall needs its own flush.
        var bucket = new Bucket();
        const int Falls = 20;
        int completed = 0;
        Task faller = Party.OnThread(() =>
        {
            for (int i = 0; i < Falls; i++)
            {
                bucket.Fall();
                Interlocked.Increment(ref completed);
            }
        });

        for (int i = 0; i < Falls; i++)
        {
            await Poll.UntilAsync(() => bucket.Holding == 1, $"fall {i} is held");
            Assert.Equal(i, Volatile.Read(ref completed));
            Assert.Equal(1, bucket.Flush());
        }

        await faller;
        Assert.Equal(Falls, completed);
    }

    [Fact(Timeout = 10_000)]
    public async Task FallAsync_CancelledWhileHeld_LeavesBucketAndFlushDoesNotCountIt()
    {
        var bucket = new Bucket();
        using var cancellation = new CancellationTokenSource();
        Task kept = bucket.FallAsync().AsTask();
        Task cancelled = bucket.FallAsync(cancellation.Token).AsTask();
        Task thread = Party.OnThread(bucket.Fall);
        await Poll.UntilAsync(() => bucket.Holding == 3, "three processes are held");

        await cancellation.CancelAsync();

        var exception = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled);
        Assert.Equal(cancellation.Token, exception.CancellationToken);
        Assert.Equal(2, bucket.Holding);
        Assert.False(kept.IsCompleted);
        Assert.False(thread.IsCompleted);

        Assert.Equal(2, bucket.Flush());
        await Task.WhenAll(kept, thread);
    }

    [Fact]
    public void FallAsync_AlreadyCancelledToken_CancelledAndNotHeld()
    {
        var bucket = new Bucket();
        using var cancellation = new CancellationTokenSource();
        cancellation.Cancel();

        AtOnce.Cancelled(bucket.FallAsync(cancellation.Token));

        Assert.Equal(0, bucket.Holding);
        Assert.Equal(0, bucket.Flush());
    }

    [Fact(Timeout = 10_000)]
    public async Task FallAsync_CancelledAfterFlush_ReportsSuccess()
    {
        var bucket = new Bucket();
        using var cancellation = new CancellationTokenSource();
        Task fall = bucket.FallAsync(cancellation.Token).AsTask();
        Assert.Equal(1, bucket.Flush());

        await cancellation.CancelAsync();

        await fall;
    }

    [Fact(Timeout = 10_000)]
    public async Task Poison_HeldThreadAndAsyncParties_GetPoisonException()
    {
        var bucket = new Bucket();
        Task async = bucket.FallAsync().AsTask();
        Task thread = Party.OnThread(bucket.Fall);
        await Poll.UntilAsync(() => bucket.Holding == 2, "two processes are held");

        bucket.Poison();

        var exception = await Assert.ThrowsAsync<PoisonException>(() => thread);
        Assert.Contains("Bucket", exception.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<PoisonException>(() => async);
        Assert.Equal(0, bucket.Holding);
    }

    [Fact(Timeout = 10_000)]
    public async Task Poisoned_LaterFallsThrowAndFlushReturnsZero()
    {
        var bucket = new Bucket();
        bucket.Poison();

        await Assert.ThrowsAsync<PoisonException>(() => Party.OnThread(bucket.Fall));
        Assert.Throws<PoisonException>(bucket.Fall);
        await Assert.ThrowsAsync<PoisonException>(async () => await bucket.FallAsync());
        using var cancellation = new CancellationTokenSource();
        await Assert.ThrowsAsync<PoisonException>(async () => await bucket.FallAsync(cancellation.Token));
        Assert.Equal(0, bucket.Holding);
        Assert.Equal(0, bucket.Flush());
    }

    [Fact(Timeout = 10_000)]
    public async Task Poison_Twice_Harmless()
    {
        var bucket = new Bucket();
        Task async = bucket.FallAsync().AsTask();

        bucket.Poison();
        bucket.Poison();

        await Assert.ThrowsAsync<PoisonException>(() => async);
        Assert.Equal(0, bucket.Flush());
    }

    /// <summary>
    /// The token is cancelled by another thread at the moment the fall starts; whatever the
    /// moment, a cancelled fall must not stay in the bucket.
    /// </summary>
    [Fact(Timeout = 20_000)]
    public async Task FallAsync_CancelledConcurrentlyWithCall_NeverStaysHeld()
    {
        var bucket = new Bucket();

        int rounds = await Party.OnThread(() => CancellationRace.Run(
            token => bucket.FallAsync(token).AsTask(),
            () => bucket.Holding == 0,
            "nobody held",
            rounds: 100_000,
            milliseconds: 400,
            seed: 11));

        Assert.True(rounds > 0);
        Assert.Equal(0, bucket.Flush());
    }

    /// <summary>
    /// Fallers (thread and async, the async ones cancelling some falls at random, racing with the
    /// flusher) fall repeatedly while a flusher thread flushes. Every successful fall was released
    /// by exactly one flush and no cancelled fall was counted: the sum of the flush results equals
    /// the number of successful falls.
    /// </summary>
    [Theory(Timeout = 30_000)]
    [InlineData(1)]
    [InlineData(2)]
    public async Task Flush_ConcurrentFallsWithCancellations_CountsEverySuccessfulFallOnce(int seed)
    {
        const int ThreadFallers = 2;
        const int AsyncFallers = 3;
        const int FallsEach = 300;
        var bucket = new Bucket();
        var seeds = new Random(seed);
        int successes = 0;
        int cancellations = 0;
        var fallers = new List<Task>();

        for (int i = 0; i < ThreadFallers; i++)
        {
            fallers.Add(Party.OnThread(() =>
            {
                for (int fall = 0; fall < FallsEach; fall++)
                {
                    bucket.Fall();
                    Interlocked.Increment(ref successes);
                }
            }));
        }

        for (int i = 0; i < AsyncFallers; i++)
        {
            var random = new Random(seeds.Next());
            fallers.Add(Party.Async(async () =>
            {
                for (int fall = 0; fall < FallsEach; fall++)
                {
                    using var cancellation = new CancellationTokenSource();
                    Task falling = bucket.FallAsync(cancellation.Token).AsTask();
                    if (random.Next(3) == 0)
                    {
                        // Races with the flusher.
                        cancellation.Cancel();
                    }

                    try
                    {
                        await falling;
                        Interlocked.Increment(ref successes);
                    }
                    catch (OperationCanceledException)
                    {
                        Interlocked.Increment(ref cancellations);
                    }
                }
            }));
        }

        Task allFallen = Task.WhenAll(fallers);
        long flushed = 0;
        await Party.OnThread(() =>
        {
            while (!allFallen.IsCompleted)
            {
                flushed += bucket.Flush();
                Thread.Yield();
            }

            flushed += bucket.Flush();
        });
        await allFallen;

        Assert.Equal(ThreadFallers * FallsEach + AsyncFallers * FallsEach, successes + cancellations);
        Assert.Equal(successes, flushed);
        Assert.Equal(0, bucket.Holding);
    }
}
