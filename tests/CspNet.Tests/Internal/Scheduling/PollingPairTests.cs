using CspNet.Alternation;
using CspNet.Internal.Scheduling;

namespace CspNet.Tests.Internal.Scheduling;

/// <summary>Runs alone: it reads a process-wide counter that other tests' hand-offs would move.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class PollingPairGroup
{
    internal const string Name = "Polling pair (process-wide hand-off counter)";
}

/// <summary>
/// A polling async process (a selection over a channel and a <see cref="Skip"/>, or a timer that
/// has already expired) beside a partner that reads or writes plainly: the poller's operations all
/// complete at once, so it never parks. Whatever it woke must not wait in its thread's next-run
/// slot: progress is bounded by count, each wake-up held over at most one of the poller's
/// operations, never by the watchdog's tick.
/// </summary>
[Collection(PollingPairGroup.Name)]
public class PollingPairTests
{
    private const int Values = 300;

    public static TheoryData<string> Polls => ["skip", "timer"];

    [Theory(Timeout = 60000)]
    [MemberData(nameof(Polls))]
    public async Task PollingReader_PlainAsyncWriter_EachWakeUpHeldOverAtMostOnePoll(string poll)
    {
        var channel = new One2OneChannel<int>();
        var received = new List<int>();
        long heldBefore = HandOffRunner.HeldPastCompletion;

        var run = new Parallel();
        run.AddProcess(async ct =>
        {
            for (int i = 0; i < Values; i++)
            {
                await channel.WriteAsync(i, ct);
            }
        });
        run.AddProcess(async ct =>
        {
            var alt = new Alternative(channel.In, PollGuard(poll));
            while (received.Count < Values)
            {
                if (await alt.PriSelectAsync(ct) == 0)
                {
                    received.Add(await channel.ReadAsync(ct));
                }
            }
        });
        await run.RunAsync();

        Assert.Equal(Enumerable.Range(0, Values), received);
        AssertHeldAtMostOncePerValue(heldBefore);
    }

    [Theory(Timeout = 60000)]
    [MemberData(nameof(Polls))]
    public async Task PollingWriter_PlainAsyncReader_EachWakeUpHeldOverAtMostOnePoll(string poll)
    {
        var channel = new One2OneChannel<int>();
        var received = new List<int>();
        long heldBefore = HandOffRunner.HeldPastCompletion;

        var run = new Parallel();
        run.AddProcess(async ct =>
        {
            var alt = new Alternative(channel.Out, PollGuard(poll));
            for (int i = 0; i < Values;)
            {
                channel.Out.Offer(i);
                if (await alt.PriSelectAsync(ct) == 0)
                {
                    i++;
                }
            }
        });
        run.AddProcess(async ct =>
        {
            for (int i = 0; i < Values; i++)
            {
                received.Add(await channel.ReadAsync(ct));
            }
        });
        await run.RunAsync();

        Assert.Equal(Enumerable.Range(0, Values), received);
        AssertHeldAtMostOncePerValue(heldBefore);
    }

    private static Guard PollGuard(string poll) => poll switch
    {
        "skip" => new Skip(),
        _ => ExpiredTimer(),
    };

    private static CSTimer ExpiredTimer()
    {
        var timer = new CSTimer();
        timer.RelativeTimeOut(0);
        return timer;
    }

    private static void AssertHeldAtMostOncePerValue(long heldBefore)
    {
        // Each value wakes the partner once. A wake-up the poller keeps over one of its later
        // operations is counted (and moved to the pool); one it kept for good would be counted at
        // every poll, thousands of times per value, until the watchdog's tick.
        long held = HandOffRunner.HeldPastCompletion - heldBefore;
        Assert.True(held <= Values, $"{held} polls held a woken partner's wake-up for {Values} values.");
    }
}
