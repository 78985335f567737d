using System.Globalization;
using Microsoft.Coyote;
using Microsoft.Coyote.SystematicTesting;
using Xunit.Abstractions;

namespace CspNet.SystematicTests;

/// <summary>
/// Runs one scenario under Coyote's controlled scheduler: first with random schedules, then with
/// PCT-style priority schedules, each for <see cref="Iterations"/> schedules, and fails with the
/// seed that replays the first bug found.
/// </summary>
/// <remarks>
/// <c>CSPNET_SYSTEMATIC_ITERATIONS</c> sets the schedules per strategy (default 200, so 400 a scenario);
/// <c>CSPNET_SYSTEMATIC_SEED</c> fixes the seed (a failure prints the one to use). The scenarios
/// use async parties only: Coyote 1.7.11 controls tasks and the channel's lock (each lock
/// acquisition is a scheduling point), but not a blocking thread's ManualResetEventSlim wait.
/// </remarks>
internal static class Systematic
{
    internal const int DefaultIterations = 200;

    internal static uint Iterations =>
        uint.TryParse(Environment.GetEnvironmentVariable("CSPNET_SYSTEMATIC_ITERATIONS"), NumberStyles.None, CultureInfo.InvariantCulture, out uint n) && n > 0
            ? n
            : DefaultIterations;

    internal static void Explore(ITestOutputHelper output, string scenario, Func<Task> test)
    {
        uint seed = uint.TryParse(Environment.GetEnvironmentVariable("CSPNET_SYSTEMATIC_SEED"), NumberStyles.None, CultureInfo.InvariantCulture, out uint fixedSeed)
            ? fixedSeed
            : (uint)Random.Shared.Next();
        foreach (string strategy in new[] { "random", "pct" })
        {
            Configuration configuration = Configuration.Create()
                .WithTestingIterations(Iterations)
                .WithRandomGeneratorSeed(seed)
                .WithMaxSchedulingSteps(20000)
                // A deadlock Coyote is sure of (every controlled task blocked) is still a bug. Its
                // periodic "potential deadlock" monitor is not reliable here: a completed async
                // operation's continuation goes through the .NET thread pool, which Coyote does not
                // control, and under priority schedules that wait can outlast the monitor.
                .WithPotentialDeadlocksReportedAsBugs(false);
            configuration = strategy == "random"
                ? configuration.WithRandomStrategy()
                : configuration.WithPrioritizationStrategy(isFair: false, priorityChangeBound: 10);

            using var engine = TestingEngine.Create(configuration, test);
            engine.Run();
            TestReport report = engine.TestReport;
            int explored = report.NumOfExploredFairPaths + report.NumOfExploredUnfairPaths;
            output.WriteLine(
                $"{scenario} [{strategy}] seed {seed}: {explored} schedules explored, {report.NumOfFoundBugs} bugs, " +
                $"max {report.MaxExploredFairSteps} scheduling steps");
            if (report.NumOfFoundBugs > 0)
            {
                Assert.Fail(
                    $"{scenario} [{strategy}] found a bug; replay with CSPNET_SYSTEMATIC_SEED={seed.ToString(CultureInfo.InvariantCulture)}: " +
                    string.Join(Environment.NewLine, report.BugReports));
            }
        }
    }
}
