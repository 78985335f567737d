using CspNet.Tests.Samples;
using Xunit.Abstractions;

namespace CspNet.Remote.Tests.Samples;

/// <summary>
/// Runs samples/PlusMinus from its build output: it hosts a NameServer, starts two writer programs
/// and reads them (paper listings 4-5). It must exit with 0 and print the summary line.
/// </summary>
public class PlusMinusSampleTests(ITestOutputHelper output)
{
    [Fact(Timeout = 90_000)]
    public async Task PlusMinus_ThreeProgramsOneNameServer_ReadsEverySumAndExitsCleanly()
    {
        SampleRunner.Result run = await SampleRunner.RunAsync("PlusMinus", SampleRunner.RepoRoot, TimeSpan.FromSeconds(60));
        output.WriteLine(run.ToString());

        Assert.True(run.ExitCode == 0, run.ToString());
        // 10 sums of 1..99 (4950) from plus, 10 sums of 1..49 (1225) from minus: 10 * (4950 - 1225).
        Assert.Contains("read 10 from plus, 10 from minus; total 37250", run.Lines);
        Assert.Contains("[plus] wrote 10 sums to plus", run.Lines);
        Assert.Contains("[minus] wrote 10 sums to minus", run.Lines);
    }
}
