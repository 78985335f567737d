using CspNet.Tests.Samples;
using SkiaSharp;
using Xunit.Abstractions;

namespace CspNet.Remote.Tests.Samples;

/// <summary>
/// The remote benchmarks' <c>charts</c> command (benchmarks/CspNet.Remote.Benchmarks/Charts) on a
/// fixture of BenchmarkDotNet JSON reports (BenchmarkReports/: a real run of NamedWriteLatency and
/// NamedThroughput, measurements left out): one PNG per benchmark class, with one series per
/// implementation. Nothing is measured: one child process of a second or two.
/// </summary>
public class RemoteBenchmarkChartTests(ITestOutputHelper output)
{
    private const string Program = "CspNet.Remote.Benchmarks";

    // Category10, the colour of each implementation in both charts (NamedCharts): named, raw gRPC, raw TCP, JCSP net2.
    private static readonly SKColor[] s_seriesColours = [new(0x1f, 0x77, 0xb4), new(0xff, 0x7f, 0x0e), new(0x2c, 0xa0, 0x2c), new(0xd6, 0x27, 0x28)];

    // Category10's next colour: a fifth series would have it.
    private static readonly SKColor s_unusedColour = new(0x94, 0x67, 0xbd);

    [Fact(Timeout = 120_000)]
    public async Task Charts_FixtureReports_WritesLatencyAndThroughputWithOneSeriesPerImplementation()
    {
        using var folder = new TempFolder();
        string charts = Path.Combine(folder.Path, "charts");
        string fixture = Path.Combine(SampleRunner.RepoRoot, "tests", "CspNet.Remote.Tests", "Samples", "BenchmarkReports");

        SampleRunner.Result run = await SampleRunner.RunBenchmarkAsync(Program, folder.Path, TimeSpan.FromSeconds(90),
            "charts", "--results", fixture, "--out", charts, "--note", "test fixture");
        output.WriteLine(run.ToString());

        Assert.True(run.ExitCode == 0, run.ToString());
        foreach (string name in new[] { "named-latency.png", "named-throughput.png" })
        {
            string path = Path.Combine(charts, name);
            string line = Assert.Single(run.Lines, l => l.StartsWith($"Chart: {path} (", StringComparison.Ordinal));
            string[] series = line[($"Chart: {path} (".Length)..^1].Split("; ");
            Assert.Collection(
                series,
                s => Assert.StartsWith("CspNet named", s, StringComparison.Ordinal),
                s => Assert.StartsWith("raw gRPC stream", s, StringComparison.Ordinal),
                s => Assert.StartsWith("raw TCP socket", s, StringComparison.Ordinal),
                s => Assert.StartsWith("JCSP net2", s, StringComparison.Ordinal));

            using SKBitmap? png = SKBitmap.Decode(path);
            Assert.True(png is not null, $"{path} is not a PNG that SkiaSharp decodes.");
            Assert.Equal((640, 400), (png.Width, png.Height));

            // Markers and legend swatches are filled with each series' exact colour (edges are
            // anti-aliased blends): every implementation is drawn, and no fifth series is.
            Dictionary<SKColor, int> counts = png.Pixels.GroupBy(p => p).ToDictionary(g => g.Key, g => g.Count());
            output.WriteLine($"{name}: {string.Join(", ", s_seriesColours.Select(c => $"{c} x {counts.GetValueOrDefault(c)}"))}");
            foreach (SKColor colour in s_seriesColours)
            {
                Assert.True(counts.GetValueOrDefault(colour) >= 50, $"{name}: only {counts.GetValueOrDefault(colour)} pixels of {colour}.");
            }

            Assert.Equal(0, counts.GetValueOrDefault(s_unusedColour));
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task Charts_NoResultsFolder_FailsWithAnError()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await SampleRunner.RunBenchmarkAsync(Program, folder.Path, TimeSpan.FromSeconds(45),
            "charts", "--results", Path.Combine(folder.Path, "missing"), "--out", folder.Path);

        Assert.True(run.ExitCode == 1, run.ToString());
        Assert.Contains("error: No results folder", run.Error, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(folder.Path, "*.png"));
    }

    [Fact(Timeout = 120_000)]
    public async Task Charts_OneSittingsCrossprocAndJcspOutput_DrawsEveryTransportBesideJcsp()
    {
        using var folder = new TempFolder();
        string results = Path.Combine(SampleRunner.RepoRoot, "benchmarks", "CspNet.Remote.Benchmarks", "results");

        SampleRunner.Result run = await SampleRunner.RunBenchmarkAsync(Program, folder.Path, TimeSpan.FromSeconds(90),
            "charts", "--crossproc", Path.Combine(results, "2026-11-27-crossproc.txt"), "--jcsp", Path.Combine(results, "2026-11-27-jcsp.txt"), "--out", folder.Path);
        output.WriteLine(run.ToString());

        Assert.True(run.ExitCode == 0, run.ToString());
        foreach (string name in new[] { "crossproc-latency.png", "crossproc-throughput.png" })
        {
            string path = Path.Combine(folder.Path, name);
            string line = Assert.Single(run.Lines, l => l.StartsWith($"Chart: {path} (", StringComparison.Ordinal));
            string[] series = line[($"Chart: {path} (".Length)..^1].Split("; ");
            Assert.Equal(5, series.Length);
            Assert.Contains(series, s => s.StartsWith("raw TCP", StringComparison.Ordinal));
            Assert.Contains(series, s => s.StartsWith("raw gRPC", StringComparison.Ordinal));
            Assert.Contains(series, s => s.StartsWith("JCSP net2", StringComparison.Ordinal));
            Assert.Equal(2, series.Count(s => s.StartsWith("CspNet named", StringComparison.Ordinal)));
            using SKBitmap? png = SKBitmap.Decode(path);
            Assert.True(png is not null, $"{path} is not a PNG that SkiaSharp decodes.");
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task Charts_CrossprocWithoutJcsp_FailsSayingWhatToGive()
    {
        using var folder = new TempFolder();
        string results = Path.Combine(SampleRunner.RepoRoot, "benchmarks", "CspNet.Remote.Benchmarks", "results");

        SampleRunner.Result run = await SampleRunner.RunBenchmarkAsync(Program, folder.Path, TimeSpan.FromSeconds(45),
            "charts", "--crossproc", Path.Combine(results, "2026-11-27-crossproc.txt"), "--out", folder.Path);

        Assert.True(run.ExitCode == 1, run.ToString());
        Assert.Contains("--crossproc needs --jcsp", run.Error, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(folder.Path, "*.png"));
    }
}
