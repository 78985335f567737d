using System;
using System.Linq;

namespace CspNet.ControlledTests;

/// <summary>The controlled scheduler itself: it finds deadlocks, and a seed replays exactly.</summary>
public class ScheduleTests
{
    [Fact]
    public void RunOne_ReaderWithoutWriter_ReportsDeadlock()
    {
        Explorer.RunResult result = Explorer.RunOne(
            s =>
            {
                var channel = new One2OneChannel<int>();
                s.Thread("reader", () => channel.In.Read());
            },
            new RandomStrategy(new Random(1)),
            stepBound: 1000);

        Assert.NotNull(result.Failure);
        Assert.StartsWith("deadlock", result.Failure, StringComparison.Ordinal);
    }

    [Fact]
    public void RunOne_SameSeedTwice_SameChoices()
    {
        static void Build(Scenario s)
        {
            var channel = new Any2OneChannel<int>(new FifoBuffer<int>(1));
            ChannelScenarioTests.AddWriter(s, "thread writer", false, channel.CreateOut(), 0, 3);
            ChannelScenarioTests.AddWriter(s, "async writer", true, channel.CreateOut(), 100, 3);
            ChannelScenarioTests.AddReader(s, "reader", true, channel.In, [], 6);
        }

        for (int seed = 0; seed < 8; seed++)
        {
            Explorer.RunResult first = Explorer.RunOne(Build, Explorer.StrategyFor(seed, 40), 1000);
            Explorer.RunResult second = Explorer.RunOne(Build, Explorer.StrategyFor(seed, 40), 1000);
            Assert.Null(first.Failure);
            Assert.True(first.Trace.SequenceEqual(second.Trace), $"Seed {seed} chose differently the second time.");
        }
    }

    [Fact]
    public void RunOne_PartyThrows_ReportsTheException()
    {
        Explorer.RunResult result = Explorer.RunOne(
            s => s.Thread("thrower", () => throw new InvalidOperationException("boom")),
            new RandomStrategy(new Random(1)),
            stepBound: 1000);

        Assert.Contains("boom", result.Failure, StringComparison.Ordinal);
    }
}
