namespace CspNet.Tests.Samples;

/// <summary>
/// The paper-table harness (benchmarks/CspNet.PaperTables) in its quickest mode with --charts: each
/// table that ran leaves a PNG. One child process of a few seconds (tiny rings, 2,000 live processes).
/// </summary>
public class PaperTablesChartTests
{
    private static readonly byte[] s_pngSignature = [0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A];

    [Fact(Timeout = 120_000)]
    public async Task Charts_QuickRunOfEveryChartedTable_WritesOnePngPerTable()
    {
        using var folder = new TempFolder();
        string charts = Path.Combine(folder.Path, "charts");

        SampleRunner.Result run = await SampleRunner.RunBenchmarkAsync("CspNet.PaperTables", folder.Path, TimeSpan.FromSeconds(90),
            "--quick", "--only", "t1,comms,live", "--live", "2K", "--charts", charts);

        Assert.True(run.ExitCode == 0, run.ToString());
        foreach (string name in new[] { "table1-ring.png", "commstime.png", "live-pairs.png" })
        {
            string path = Path.Combine(charts, name);
            Assert.True(File.Exists(path), $"{path} missing.\n{run}");
            byte[] bytes = await File.ReadAllBytesAsync(path);
            Assert.Equal(s_pngSignature, bytes.Take(s_pngSignature.Length));

            // A blank 640x400 PNG compresses to well under 5 KB; axes, bars and text make ~25 KB.
            Assert.True(bytes.Length > 10_000, $"{name} is only {bytes.Length} bytes.");
            Assert.Contains(run.Lines, line => line.Trim() == "Chart: " + path);
        }
    }
}
