using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Threading.Tasks;
using Xunit.Abstractions;

namespace CspNet.ControlledTests;

/// <summary>
/// Explores a scenario: runs it under many seeded schedules (<see cref="Schedule"/>) and fails
/// with the seed of the first schedule that breaks it.
/// </summary>
/// <remarks>
/// <para>
/// Schedule seeds are the scenario's base seed (a hash of its name) plus 0, 1, 2...; a seed picks
/// its strategy (seed mod 4: 0 and 1 random, 2 PCT depth 2, 3 PCT depth 3) and every choice of
/// it. PCT needs the length of a run: that is the length of one calibration run (a random
/// schedule with the base seed), so a seed replays alone exactly as it ran in the exploration.
/// </para>
/// <para>
/// <c>CSPNET_SCHEDULE_SEED=&lt;seed&gt;</c> runs that one schedule and prints its choices;
/// <c>CSPNET_SCHEDULE_ITERATIONS=&lt;n&gt;</c> runs n schedules per scenario instead of the default.
/// </para>
/// </remarks>
internal static class Explorer
{
    internal const string SeedVariable = "CSPNET_SCHEDULE_SEED";
    internal const string IterationsVariable = "CSPNET_SCHEDULE_ITERATIONS";

    /// <summary>Schedules per scenario by default: the whole project stays well under two minutes on two cores.</summary>
    internal const int DefaultSchedules = 2000;

    private static readonly TimeSpan s_wallTimeout = TimeSpan.FromSeconds(20);

    static Explorer()
    {
        // A failed Debug.Assert in the engine fails the schedule (with its seed) instead of the test host.
        Trace.Listeners.Clear();
        Trace.Listeners.Add(new ThrowingTraceListener());
    }

    /// <summary>The outcome of an exploration.</summary>
    internal sealed record Summary(int Schedules, int MaxSteps, TimeSpan Elapsed);

    /// <summary>Explores <paramref name="build"/>'s scenario; throws (xunit failure) with the seed of a failing schedule.</summary>
    internal static Summary Explore(ITestOutputHelper output, string scenario, Action<Scenario> build, int schedules = DefaultSchedules, int stepBound = 20_000)
    {
        var clock = Stopwatch.StartNew();
        int baseSeed = BaseSeed(scenario);
        RunResult calibration = RunOne(build, new RandomStrategy(new Random(baseSeed)), stepBound);
        if (calibration.Failure is not null)
        {
            Assert.Fail(Report(scenario, baseSeed, "random (calibration)", calibration));
        }

        int expectedSteps = Math.Max(1, calibration.Steps);
        if (Environment.GetEnvironmentVariable(SeedVariable) is { Length: > 0 } replay)
        {
            int seed = int.Parse(replay, CultureInfo.InvariantCulture);
            IStrategy strategy = StrategyFor(seed, expectedSteps);
            RunResult result = RunOne(build, strategy, stepBound);
            output.WriteLine($"{scenario}: replayed seed {seed} ({strategy.Name}), {result.Steps} scheduling points; choices: {string.Join(" ", result.Trace)}");
            if (result.Failure is not null)
            {
                Assert.Fail(Report(scenario, seed, strategy.Name, result));
            }

            return new Summary(1, result.Steps, clock.Elapsed);
        }

        if (Environment.GetEnvironmentVariable(IterationsVariable) is { Length: > 0 } iterations)
        {
            schedules = int.Parse(iterations, CultureInfo.InvariantCulture);
        }

        int maxSteps = calibration.Steps;
        for (int i = 0; i < schedules; i++)
        {
            int seed = unchecked(baseSeed + i) & int.MaxValue;
            IStrategy strategy = StrategyFor(seed, expectedSteps);
            RunResult result = RunOne(build, strategy, stepBound);
            if (result.Failure is not null)
            {
                Assert.Fail(Report(scenario, seed, strategy.Name, result));
            }

            maxSteps = Math.Max(maxSteps, result.Steps);
        }

        var summary = new Summary(schedules, maxSteps, clock.Elapsed);
        output.WriteLine($"{scenario}: {schedules} schedules (seeds {baseSeed}..{baseSeed + schedules - 1}), up to {maxSteps} scheduling points each, {clock.Elapsed.TotalSeconds:0.0} s");
        return summary;
    }

    /// <summary>Runs one schedule of the scenario; exposed for the tests of the scheduler itself.</summary>
    internal static RunResult RunOne(Action<Scenario> build, IStrategy strategy, int stepBound)
    {
        var scenario = new Scenario();
        build(scenario);
        var schedule = new Schedule(strategy, stepBound);
        scenario.AddTo(schedule);
        string? failure = schedule.Run(s_wallTimeout);
        if (failure is null)
        {
            try
            {
                scenario.RunChecks();
            }
#pragma warning disable CA1031 // A failed check is the schedule's failure, reported with its seed.
            catch (Exception e)
#pragma warning restore CA1031
            {
                failure = e.Message;
            }
        }

        return new RunResult(failure, schedule.Steps, [.. schedule.Trace]);
    }

    internal static IStrategy StrategyFor(int seed, int expectedSteps)
    {
        var random = new Random(seed);
        return (seed & 3) switch
        {
            2 => new PctStrategy(random, 2, expectedSteps),
            3 => new PctStrategy(random, 3, expectedSteps),
            _ => new RandomStrategy(random),
        };
    }

    /// <summary>A stable hash of the scenario's name (string.GetHashCode differs per process).</summary>
    internal static int BaseSeed(string scenario)
    {
        uint hash = 2166136261;
        foreach (char c in scenario)
        {
            hash = (hash ^ c) * 16777619;
        }

        return (int)(hash & 0x3FFFFFFF);
    }

    private static string Report(string scenario, int seed, string strategy, RunResult result) =>
        $"{scenario} failed under schedule seed {seed} ({strategy}): {result.Failure}{Environment.NewLine}" +
        $"Replay it: {SeedVariable}={seed} dotnet test tests/CspNet.ControlledTests --filter \"FullyQualifiedName~{TestName(scenario)}\"";

    private static string TestName(string scenario)
    {
        int parenthesis = scenario.IndexOf('(', StringComparison.Ordinal);
        return parenthesis < 0 ? scenario : scenario[..parenthesis];
    }

    /// <summary>One schedule's outcome: the failure (null if none), its scheduling points and choices.</summary>
    internal sealed record RunResult(string? Failure, int Steps, IReadOnlyList<int> Trace);

    private sealed class ThrowingTraceListener : TraceListener
    {
        public override void Fail(string? message, string? detailMessage) =>
            throw new InvalidOperationException($"Debug.Assert failed: {message} {detailMessage}");

        public override void Write(string? message)
        {
        }

        public override void WriteLine(string? message)
        {
        }
    }
}

/// <summary>What a scenario is made of: its parties, built afresh for each schedule, and the checks run once they all ended.</summary>
internal sealed class Scenario
{
    private readonly List<Action<Schedule>> _parties = [];
    private readonly List<Action> _checks = [];

    /// <summary>A thread process: runs on its own thread and may block.</summary>
    internal void Thread(string name, Action body) => _parties.Add(s => s.AddThread(name, body));

    /// <summary>An async process: its continuations run on its own thread, as the scheduler chooses.</summary>
    internal void Async(string name, Func<Task> body) => _parties.Add(s => s.AddAsync(name, body));

    /// <summary>A check run after every party ended (an exception fails the schedule).</summary>
    internal void Check(Action check) => _checks.Add(check);

    internal void AddTo(Schedule schedule)
    {
        foreach (Action<Schedule> party in _parties)
        {
            party(schedule);
        }
    }

    internal void RunChecks()
    {
        foreach (Action check in _checks)
        {
            check();
        }
    }
}
