using System.Globalization;
using CspNet.Tests.Samples;
using Xunit.Abstractions;

namespace CspNet.Remote.Tests.Samples;

/// <summary>
/// Runs samples/MonteCarloPi's distributed mode (paper Table 4) from its build output: an
/// embedded NameServer, two worker pool programs, DistParallel shipping the workers to them.
/// </summary>
public class MonteCarloPiDistributedSampleTests(ITestOutputHelper output)
{
    [Fact(Timeout = 120_000)]
    public async Task MonteCarloPi_DistMode_ShipsEveryWorkerToThePoolsAndAgreesWithTheThreadSplit()
    {
        SampleRunner.Result run = await SampleRunner.RunAsync("MonteCarloPi", SampleRunner.RepoRoot, TimeSpan.FromSeconds(90),
            "--mode", "dist", "--iterations", "2M", "--pool-workers", "2", "--repeat", "1", "--warm-up", "0");
        output.WriteLine(run.ToString());

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains("distributed: 4 processes ran on 2 worker pool programs, 0 here (last run)", run.Lines);
        double sequential = Estimate(run.Lines, "sequential");
        double distributed = Estimate(run.Lines, "distributed");
        Assert.InRange(sequential, 3.1, 3.2);
        Assert.InRange(distributed, 3.1, 3.2);
    }

    [Fact(Timeout = 120_000)]
    public async Task MonteCarloPi_Paper001Mode_BothFarmsCountEveryPacketOnceAndAgree()
    {
        SampleRunner.Result run = await SampleRunner.RunAsync("MonteCarloPi", SampleRunner.RepoRoot, TimeSpan.FromSeconds(90),
            "--mode", "paper001", "--iterations", "2M", "--processes", "3", "--packets", "40", "--repeat", "4", "--warm-up", "0");
        output.WriteLine(run.ToString());

        Assert.True(run.ExitCode == 0, run.ToString());

        // The same 40 packets in both farms, whoever computed each: the same count, so the same estimate.
        double requestRespond = Estimate(run.Lines, "request-respond");
        Assert.Equal(requestRespond, Estimate(run.Lines, "scatter-gather"));
        Assert.InRange(requestRespond, 3.1, 3.2);
    }

    // The estimate column of the result table's row for a mode: "name  processes  estimate ...".
    private static double Estimate(string[] lines, string mode)
    {
        string row = Assert.Single(lines, line => line.StartsWith(mode + " ", StringComparison.Ordinal));
        return double.Parse(row.Split(' ', StringSplitOptions.RemoveEmptyEntries)[2], CultureInfo.InvariantCulture);
    }
}
