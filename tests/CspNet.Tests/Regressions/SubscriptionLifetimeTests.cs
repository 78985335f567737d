using System.Runtime.CompilerServices;

namespace CspNet.Tests.Regressions;

/// <summary>
/// Defects found in review: a selection leaves nothing behind in its channels or timers, so
/// memory and per-operation cost do not grow with the number of selections ever run.
/// </summary>
public class SubscriptionLifetimeTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(5);

    // Defect 6: alternatives (and ends) that selected on a channel are not kept by it.
    [Fact]
    public void PriSelect_ManyAlternativesOverFreshEnds_NoneKeptAliveByTheChannel()
    {
        var channel = new Any2AnyChannel<int>();
        WeakReference[] ends = SelectOnce(channel, 1000);

        ForceFullCollection();
        int alive = ends.Count(reference => reference.IsAlive);
        Assert.True(alive == 0, $"{alive} of {ends.Length} reading ends of finished alternatives are still reachable from the channel.");
    }

    // Defect 10: an async select that ended before its timeout leaves no armed timer behind.
    [Fact(Timeout = 30000)]
    public async Task PriSelectAsync_EndedBeforeItsTimeout_AlternativeCollectable()
    {
        var channel = new One2OneChannel<int>();
        Task writer = Task.Run(async () =>
        {
            for (int i = 0; i < 100; i++)
            {
                await channel.WriteAsync(i);
            }
        });

        WeakReference timerGuard = await SelectWithLongTimeoutAsync(channel, 100);
        await writer.WaitAsync(Patience);

        // When the select's last step resumed on a pool thread, this method went on inline inside
        // that step (no synchronization context here): the finished helper's state machine, which
        // holds the timer, is still on that thread's stack until the step returns. Collect from a
        // fresh stack, a few times, so the test sees what outlives the select, not that frame. An
        // armed timer (the defect) keeps it alive for an hour, through every attempt.
        for (int attempt = 0; attempt < 20 && timerGuard.IsAlive; attempt++)
        {
            await Task.Yield();
            ForceFullCollection();
        }

        Assert.False(timerGuard.IsAlive, "An alternative (here its timer guard) whose async select has ended is kept alive by an armed timer.");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference[] SelectOnce(Any2AnyChannel<int> channel, int count)
    {
        var references = new WeakReference[count];
        for (int i = 0; i < count; i++)
        {
            AltingChannelIn<int> end = channel.CreateIn();
            var alt = new Alternative(end, new Skip());
            Assert.Equal(1, alt.PriSelect());
            references[i] = new WeakReference(end);
        }

        return references;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<WeakReference> SelectWithLongTimeoutAsync(One2OneChannel<int> channel, int count)
    {
        var timer = new CSTimer();
        var alt = new Alternative(channel.In, timer);
        for (int i = 0; i < count; i++)
        {
            timer.RelativeTimeOut(3_600_000);
            Assert.Equal(0, await alt.PriSelectAsync());
            Assert.Equal(i, channel.In.Read());
        }

        return new WeakReference(timer);
    }

    private static void ForceFullCollection()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
    }
}
