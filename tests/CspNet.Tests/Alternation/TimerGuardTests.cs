using System.Diagnostics;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>CSTimer: its clock, its sleeps, and its timeouts as guards.</summary>
public class TimerGuardTests
{
    [Theory(Timeout = 20000)]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(7)]
    [InlineData(30)]
    [InlineData(120)]
    public async Task PriSelect_RelativeTimeOut_ReturnsTimerIndexNoEarlierThanTimeout(int milliseconds)
    {
        var never = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative(never.In, timer);

        double elapsed = await AltThread.Start(() =>
        {
            long start = Stopwatch.GetTimestamp();
            timer.RelativeTimeOut(milliseconds);
            Assert.Equal(1, alt.PriSelect());
            return AltTime.MillisecondsSince(start);
        }).Completion;

        Assert.True(elapsed >= milliseconds, $"Timer of {milliseconds} ms fired after {elapsed:F3} ms.");
    }

    [Theory(Timeout = 20000)]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(7)]
    [InlineData(30)]
    [InlineData(120)]
    public async Task FairSelectAsync_RelativeTimeOut_ReturnsTimerIndexNoEarlierThanTimeout(int milliseconds)
    {
        var never = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative(timer, never.In);

        long start = Stopwatch.GetTimestamp();
        timer.RelativeTimeOut(milliseconds);
        Assert.Equal(0, await alt.FairSelectAsync());
        double elapsed = AltTime.MillisecondsSince(start);

        Assert.True(elapsed >= milliseconds, $"Timer of {milliseconds} ms fired after {elapsed:F3} ms.");
    }

    [Fact(Timeout = 30000)]
    public async Task PriSelect_RepeatedShortTimeouts_NeverFireEarly()
    {
        var never = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative(never.In, timer);

        double[] elapsed = await AltThread.Start(() =>
        {
            var result = new double[200];
            for (int n = 0; n < result.Length; n++)
            {
                int ms = 1 + (n % 4);
                long start = Stopwatch.GetTimestamp();
                timer.RelativeTimeOut(ms);
                Assert.Equal(1, alt.PriSelect());
                result[n] = AltTime.MillisecondsSince(start) - ms;
            }

            return result;
        }).Completion;

        Assert.True(elapsed.Min() >= 0, $"A timer fired {-elapsed.Min():F3} ms early.");

        var asyncAlt = new Alternative(never.In, timer);
        for (int n = 0; n < 100; n++)
        {
            int ms = 1 + (n % 4);
            long start = Stopwatch.GetTimestamp();
            timer.RelativeTimeOut(ms);
            Assert.Equal(1, await asyncAlt.PriSelectAsync());
            double early = ms - AltTime.MillisecondsSince(start);
            Assert.True(early <= 0, $"An async timer of {ms} ms fired {early:F3} ms early.");
        }
    }

    [Fact(Timeout = 20000)]
    public async Task PriSelect_AbsoluteTimeOut_ReturnsOnlyOnceClockReachesTime()
    {
        var never = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative(never.In, timer);

        (long target, long after) = await AltThread.Start(() =>
        {
            long target = timer.Read() + 80;
            timer.AbsoluteTimeOut(target);
            Assert.Equal(1, alt.PriSelect());
            return (target, timer.Read());
        }).Completion;
        Assert.True(after >= target, $"Fired at {after}, before {target}.");

        long asyncTarget = timer.Read() + 40;
        timer.AbsoluteTimeOut(asyncTarget);
        Assert.Equal(1, await alt.PriSelectAsync());
        Assert.True(timer.Read() >= asyncTarget);
    }

    [Fact]
    public void PriSelect_AbsoluteTimeOutAlreadyPast_ReadyAtOnce()
    {
        var timer = new CSTimer();
        var alt = new Alternative(timer, new Skip());

        timer.AbsoluteTimeOut(timer.Read() - 10);
        Assert.Equal(0, alt.PriSelect());
        timer.AbsoluteTimeOut(0);
        Assert.Equal(0, alt.PriSelect());
    }

    /// <summary>
    /// The documentation promises that "a time already past makes the guard ready at once". The
    /// clock has an arbitrary origin (here: time since boot), so a computed time can be negative;
    /// such a timeout is taken for "no timeout" and the guard never fires.
    /// </summary>
    [Fact]
    public void PriSelect_AbsoluteTimeOutNegativePastTime_ReadyAtOnce()
    {
        var timer = new CSTimer();
        var alt = new Alternative(timer, new Skip());

        timer.AbsoluteTimeOut(-1);
        Assert.Equal(0, alt.PriSelect());
    }

    /// <summary>
    /// A timeout far in the future (here 30 days, or "never" written as
    /// <c>AbsoluteTimeOut(long.MaxValue)</c>) must simply not fire while another guard becomes
    /// ready. The blocking select passes the whole delay to ManualResetEventSlim.Wait, which
    /// accepts at most int.MaxValue ms (24.8 days), and the async select to Timer.Change, which
    /// accepts at most 2^32 - 2 ms (49.7 days): both throw ArgumentOutOfRangeException.
    /// </summary>
    [Theory(Timeout = 20000)]
    [InlineData(false, 30L * 24 * 3600 * 1000)]
    [InlineData(true, 60L * 24 * 3600 * 1000)]
    [InlineData(false, -1L)]
    [InlineData(true, -1L)]
    public async Task Select_TimeoutFarInFuture_WaitsForOtherGuard(bool asyncSelect, long relativeMilliseconds)
    {
        var channel = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative(timer, channel.In);
        if (relativeMilliseconds < 0)
        {
            timer.AbsoluteTimeOut(long.MaxValue);
        }
        else
        {
            timer.RelativeTimeOut(relativeMilliseconds);
        }

        Task<int> select = asyncSelect ? alt.PriSelectAsync().AsTask() : AltThread.Start(() => alt.PriSelect()).Completion;
        if (asyncSelect)
        {
            Assert.False(select.IsCompleted, select.Exception?.InnerException?.Message ?? "Nothing is ready yet.");
        }

        Task write = channel.WriteAsync(1).AsTask();
        Assert.Equal(1, await select);
        Assert.Equal(1, channel.In.Read());
        await write;
    }

    [Fact(Timeout = 20000)]
    public async Task PriSelectAsync_ClearTimeOut_TimerNeverChosen()
    {
        var never = new One2OneChannel<int>();
        var cleared = new CSTimer();
        var sentinel = new CSTimer();
        var alt = new Alternative(cleared, never.In, sentinel);

        cleared.RelativeTimeOut(10);
        cleared.ClearTimeOut();
        Assert.Equal(-1, cleared.TimeOut);
        long start = Stopwatch.GetTimestamp();
        sentinel.RelativeTimeOut(150);

        // Had the cleared timer stayed armed, it would have won at 10 ms (and it comes first).
        Assert.Equal(2, await alt.PriSelectAsync());
        Assert.True(AltTime.MillisecondsSince(start) >= 150);
    }

    [Fact(Timeout = 20000)]
    public async Task PriSelect_ClearTimeOutWithInputGuard_ChoosesInputNotTimer()
    {
        var channel = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative(timer, channel.In);

        AltThread<int> selector = AltThread.Start(() =>
        {
            timer.RelativeTimeOut(5);
            timer.ClearTimeOut();
            int chosen = alt.PriSelect();
            return chosen;
        });

        // Let a time well past the cleared timeout go by on the timer's own clock, then write.
        await new CSTimer().SleepAsync(60);
        await channel.WriteAsync(9);
        Assert.Equal(1, await selector.Completion);
        Assert.Equal(9, channel.In.Read());
    }

    [Fact(Timeout = 20000)]
    public async Task PriSelect_TimerWithFalsePrecondition_NotChosen()
    {
        var timer = new CSTimer();
        var sentinel = new CSTimer();
        var alt = new Alternative(timer, sentinel);
        timer.RelativeTimeOut(0);
        sentinel.RelativeTimeOut(30);

        Assert.Equal(1, await alt.PriSelectAsync([false, true]));
        Assert.Equal(0, alt.PriSelect([true, true]));
    }

    [Fact(Timeout = 20000)]
    public async Task FairSelectAsync_InputReadyBeforeTimeout_ChoosesInput()
    {
        var channel = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative(channel.In, timer);
        timer.RelativeTimeOut(60000);

        ValueTask<int> select = alt.FairSelectAsync();
        Assert.False(select.IsCompleted, "Nothing is ready yet.");
        ValueTask write = channel.WriteAsync(3);
        Assert.Equal(0, await select);
        Assert.Equal(3, channel.In.Read());
        await write;
    }

    [Fact(Timeout = 20000)]
    public async Task PriSelect_TwoTimers_EarlierOneChosen()
    {
        var never = new One2OneChannel<int>();
        var late = new CSTimer();
        var early = new CSTimer();
        var alt = new Alternative(never.In, late, early);
        late.RelativeTimeOut(5000);
        early.RelativeTimeOut(20);

        Assert.Equal(2, await AltThread.Start(() => alt.PriSelect()).Completion);
        Assert.Equal(2, await alt.PriSelectAsync());
    }

    [Fact]
    public void Read_ManyCalls_NeverGoesBackwards()
    {
        var timer = new CSTimer();
        long previous = timer.Read();
        for (int n = 0; n < 200_000; n++)
        {
            long now = timer.Read();
            Assert.True(now >= previous, $"Read went from {previous} to {now}.");
            previous = now;
        }
    }

    [Fact]
    public void Read_AcrossSleep_AdvancesByAtLeastTheSleep()
    {
        var timer = new CSTimer();
        long before = timer.Read();
        timer.Sleep(25);
        Assert.True(timer.Read() - before >= 25);
    }

    [Fact]
    public void TimeOut_AfterRelativeTimeOut_IsNowPlusDelay()
    {
        var timer = new CSTimer();
        Assert.Equal(-1, timer.TimeOut);
        long before = timer.Read();
        timer.RelativeTimeOut(500);
        long after = timer.Read();
        Assert.InRange(timer.TimeOut, before + 500, after + 501);
        timer.AbsoluteTimeOut(before + 1234);
        Assert.Equal(before + 1234, timer.TimeOut);
        timer.ClearTimeOut();
        Assert.Equal(-1, timer.TimeOut);
    }

    [Fact(Timeout = 10000)]
    public async Task RelativeTimeOutAndSleep_NegativeDelay_Throw()
    {
        var timer = new CSTimer();
        Assert.Throws<ArgumentOutOfRangeException>(() => timer.RelativeTimeOut(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => timer.Sleep(-1));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => timer.SleepAsync(-1));
    }

    [Fact(Timeout = 30000)]
    public async Task Sleep_ManyShortSleeps_EachWaitsAtLeastTheAskedTime()
    {
        var timer = new CSTimer();
        double shortest = await AltThread.Start(() =>
        {
            double worst = double.MaxValue;
            for (int n = 0; n < 1000; n++)
            {
                int ms = 1 + (n % 2);
                long start = Stopwatch.GetTimestamp();
                timer.Sleep(ms);
                worst = Math.Min(worst, AltTime.MillisecondsSince(start) - ms);
            }

            return worst;
        }).Completion;

        Assert.True(shortest >= 0, $"A Sleep returned {-shortest:F3} ms early.");
    }

    /// <summary>
    /// SleepAsync(ms) waits until Read() + ms; Read() rounds the clock down to a whole
    /// millisecond, so the target can be up to 1 ms sooner than ms from now, and Task.Delay may
    /// complete early on the millisecond clock: SleepAsync then returns before ms have passed.
    /// </summary>
    [Fact(Timeout = 30000)]
    public async Task SleepAsync_ManyShortSleeps_EachWaitsAtLeastTheAskedTime()
    {
        var timer = new CSTimer();
        double shortest = double.MaxValue;
        for (int n = 0; n < 1000; n++)
        {
            int ms = 1 + (n % 2);
            long start = Stopwatch.GetTimestamp();
            await timer.SleepAsync(ms);
            shortest = Math.Min(shortest, AltTime.MillisecondsSince(start) - ms);
        }

        Assert.True(shortest >= 0, $"A SleepAsync returned {-shortest:F3} ms early.");
    }

    [Fact(Timeout = 20000)]
    public async Task AfterAndAfterAsync_Target_ReturnOnlyOnceClockReachesIt()
    {
        var timer = new CSTimer();
        long target = timer.Read() + 30;
        await AltThread.Start(() => timer.After(target)).Completion;
        Assert.True(timer.Read() >= target);

        long asyncTarget = timer.Read() + 30;
        await timer.AfterAsync(asyncTarget);
        Assert.True(timer.Read() >= asyncTarget);

        // A past time returns at once.
        timer.After(timer.Read() - 1000);
        await timer.AfterAsync(timer.Read() - 1000);
    }

    [Fact(Timeout = 10000)]
    public async Task SleepAsync_Cancelled_ThrowsOperationCanceled()
    {
        var timer = new CSTimer();
        using var cts = new CancellationTokenSource();
        Task sleep = timer.SleepAsync(60000, cts.Token);
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => sleep);
    }
}
