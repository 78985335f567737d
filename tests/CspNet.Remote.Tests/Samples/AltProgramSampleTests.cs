using CspNet.Tests.Samples;
using Xunit.Abstractions;

namespace CspNet.Remote.Tests.Samples;

/// <summary>
/// Runs samples/AltProgram (paper listings 4-6) from its build output: DistParallel ships the
/// three processes to two worker pool programs, and without pools runs them locally.
/// </summary>
public class AltProgramSampleTests(ITestOutputHelper output)
{
    [Fact(Timeout = 120_000)]
    public async Task AltProgram_TwoPoolPrograms_RunsListingSixOnThePoolsAndReadsEverySum()
    {
        SampleRunner.Result run = await SampleRunner.RunAsync("AltProgram", SampleRunner.RepoRoot, TimeSpan.FromSeconds(90));
        output.WriteLine(run.ToString());

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains("DistParallel ran 3 processes on worker pools and 0 here", run.Lines);
        // 100 sums from each writer, added and subtracted: 0. The reader ran on a pool, so its line has the pool's label.
        Assert.Single(run.Lines, line => line.StartsWith("[pool-", StringComparison.Ordinal) && line.EndsWith("] AltReader: result 0, read 100 from plus and 100 from minus", StringComparison.Ordinal));
    }

    [Fact(Timeout = 90_000)]
    public async Task AltProgram_StandAlone_RunsListingSixLocally()
    {
        SampleRunner.Result run = await SampleRunner.RunAsync("AltProgram", SampleRunner.RepoRoot, TimeSpan.FromSeconds(60), "standalone");
        output.WriteLine(run.ToString());

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains("AltReader: result 0, read 100 from plus and 100 from minus", run.Lines);
        Assert.Contains("DistParallel ran 0 processes on worker pools and 3 here", run.Lines);
    }
}
