using Barrier = CspNet.Barrier;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Barriers;

/// <summary>Poisoning a barrier fails every waiting and every later sync with <see cref="PoisonException"/>.</summary>
public class BarrierPoisonTests
{
    [Fact(Timeout = 10_000)]
    public async Task Poison_WhileThreadAndAsyncPartiesWait_BothGetPoisonException()
    {
        var barrier = new Barrier(4);
        Task thread = Party.OnThread(barrier.Sync);
        Task secondThread = Party.OnThread(barrier.Sync);
        Task async = barrier.SyncAsync().AsTask();
        await Poll.UntilAsync(() => barrier.Waiting == 3, "three processes wait");

        barrier.Poison();

        var exception = await Assert.ThrowsAsync<PoisonException>(() => thread);
        Assert.Contains("Barrier", exception.Message, StringComparison.Ordinal);
        await Assert.ThrowsAsync<PoisonException>(() => secondThread);
        await Assert.ThrowsAsync<PoisonException>(() => async);
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task Poison_WaitingAsyncWithCancellableToken_GetsPoisonNotCancellation()
    {
        var barrier = new Barrier(2);
        using var cancellation = new CancellationTokenSource();
        Task async = barrier.SyncAsync(cancellation.Token).AsTask();

        barrier.Poison();
        await cancellation.CancelAsync();

        await Assert.ThrowsAsync<PoisonException>(() => async);
    }

    [Fact(Timeout = 10_000)]
    public async Task Poisoned_LaterSyncSyncAsyncAndEnroll_ThrowPoisonException()
    {
        var barrier = new Barrier(1);
        barrier.Poison();

        // Even a sync that would pass at once (1 enrolled) fails.
        Assert.Throws<PoisonException>(barrier.Sync);
        await Assert.ThrowsAsync<PoisonException>(async () => await barrier.SyncAsync());
        using var cancellation = new CancellationTokenSource();
        await Assert.ThrowsAsync<PoisonException>(async () => await barrier.SyncAsync(cancellation.Token));
        Assert.Throws<PoisonException>(barrier.Enroll);
        Assert.Equal(1, barrier.Enrolled);
        Assert.Equal(0, barrier.Waiting);
    }

    [Fact(Timeout = 10_000)]
    public async Task Poisoned_ThreadSync_ThrowsPoisonException()
    {
        var barrier = new Barrier(3);
        barrier.Poison();

        await Assert.ThrowsAsync<PoisonException>(() => Party.OnThread(barrier.Sync));
    }

    [Fact(Timeout = 10_000)]
    public async Task Poison_Twice_Harmless()
    {
        var barrier = new Barrier(2);
        Task async = barrier.SyncAsync().AsTask();

        barrier.Poison();
        barrier.Poison();

        await Assert.ThrowsAsync<PoisonException>(() => async);
        await Assert.ThrowsAsync<PoisonException>(async () => await barrier.SyncAsync());
    }

    [Fact(Timeout = 10_000)]
    public async Task Poison_DuringManyPhases_EveryProcessEndsWithPoisonException()
    {
        // Processes sync in a loop; one of them poisons the barrier at some phase. Everyone must
        // end (none left waiting) and every process except the poisoner with PoisonException.
        const int ThreadParties = 2;
        const int AsyncParties = 2;
        var barrier = new Barrier(ThreadParties + AsyncParties + 1);
        var processes = new List<Task>();
        for (int i = 0; i < ThreadParties; i++)
        {
            processes.Add(Party.OnThread(() =>
            {
                while (true)
                {
                    barrier.Sync();
                }
            }));
        }

        for (int i = 0; i < AsyncParties; i++)
        {
            processes.Add(Party.Async(async () =>
            {
                while (true)
                {
                    await barrier.SyncAsync();
                }
            }));
        }

        for (int phase = 0; phase < 100; phase++)
        {
            await barrier.SyncAsync();
        }

        barrier.Poison();

        foreach (Task process in processes)
        {
            await Assert.ThrowsAsync<PoisonException>(() => process);
        }

        Assert.Equal(0, barrier.Waiting);
    }
}
