namespace CspNet.Tests.Samples;

/// <summary>
/// The paper-table harness's distributed tables (benchmarks/CspNet.PaperTables --distributed) in
/// their quickest mode: child programs join through the harness's NameServer, the farms check their
/// own results (pi within 0.01, every Mandelbrot row exactly once) and every child ends with the run.
/// </summary>
public class PaperTablesDistributedTests
{
    [Fact(Timeout = 240_000)]
    public async Task Distributed_QuickRunOfPingPiAndMandelbrotWithCharts_PrintsEachTableAndChartAndEnds()
    {
        using var folder = new TempFolder();
        string charts = Path.Combine(folder.Path, "charts");

        SampleRunner.Result run = await SampleRunner.RunBenchmarkAsync("CspNet.PaperTables", folder.Path, TimeSpan.FromSeconds(200),
            "--distributed", "--quick", "--only", "d-ping,d-pi,d-mandel", "--charts", charts);

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains(run.Lines, line => line.TrimStart().StartsWith("sync CSP / unbuffered named", StringComparison.Ordinal));
        Assert.Contains(run.Lines, line => line.StartsWith("Paper 001 Table 1", StringComparison.Ordinal));
        Assert.Contains(run.Lines, line => line.StartsWith("Paper 002 Mandelbrot", StringComparison.Ordinal));
        Assert.DoesNotContain(run.Lines, line => line.Contains("FAILED", StringComparison.Ordinal));
        foreach (string name in new[] { "d-ping.png", "d-pi.png", "d-mandel.png" })
        {
            string path = Path.Combine(charts, name);
            Assert.True(File.Exists(path), $"{path} missing.\n{run}");
            Assert.True(new FileInfo(path).Length > 10_000, $"{name} is only {new FileInfo(path).Length} bytes.");
            Assert.Contains(run.Lines, line => line.Trim() == "Chart: " + path);
        }
    }
}
