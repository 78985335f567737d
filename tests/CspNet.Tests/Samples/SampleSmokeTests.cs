using System.Globalization;
using SkiaSharp;
using Xunit.Abstractions;

namespace CspNet.Tests.Samples;

/// <summary>
/// Smoke runs of the samples at tiny sizes: each must exit with 0 and print what it promises.
/// The samples run as child processes from their build output (see <see cref="SampleRunner"/>),
/// each in well under two seconds. Outputs are deterministic (fixed seeds, counts, picture sizes);
/// only timings vary, and the tests do not look at them.
/// </summary>
public class SampleSmokeTests(ITestOutputHelper output)
{
    [Fact(Timeout = 60_000)]
    public async Task MonteCarloPi_TinyRunOfEveryMode_ThreadsAndAsyncAgreeAndEstimatePi()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("MonteCarloPi", folder.Path, "--iterations", "200000", "--processes", "3", "--seed", "115");

        Assert.True(run.ExitCode == 0, run.ToString());
        double sequential = Estimate(run, "sequential", processes: 1);
        double threads = Estimate(run, "threads", processes: 3);
        double async = Estimate(run, "async", processes: 3);
        Assert.Equal(threads, async);
        Assert.InRange(sequential, Math.PI - 0.02, Math.PI + 0.02);
        Assert.InRange(threads, Math.PI - 0.02, Math.PI + 0.02);

        // The library is built optimised for this sample even in a Debug build of the solution.
        Assert.DoesNotContain(run.Lines, line => line.Contains("Debug build", StringComparison.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    public async Task MonteCarloPi_RepeatWithoutWarmUp_ReportsMedianOfTheTimedRuns()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("MonteCarloPi", folder.Path, "--iterations", "100k", "--processes", "2", "--repeat", "3", "--warm-up", "0");

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains("times: median of 3 timed runs of each mode, after 0 warm-up runs; the modes take turns", run.Lines);
        foreach (string mode in new[] { "sequential", "threads", "async" })
        {
            string[] row = Fields(Assert.Single(run.Lines, line => Fields(line) is [var m, ..] && m == mode));
            double median = double.Parse(row[4], CultureInfo.InvariantCulture);
            string[] range = row[5].Split("..");
            Assert.InRange(median, double.Parse(range[0], CultureInfo.InvariantCulture), double.Parse(range[1], CultureInfo.InvariantCulture));
        }
    }

    [Theory(Timeout = 60_000)]
    [InlineData("--repeat", "0")]
    [InlineData("--warm-up", "-1")]
    public async Task MonteCarloPi_RepetitionsOutOfRange_ExitsWithUsageError(string option, string value)
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("MonteCarloPi", folder.Path, option, value);

        Assert.True(run.ExitCode == 2, run.ToString());
        Assert.Contains(option, run.Error, StringComparison.Ordinal);
    }

    [Fact(Timeout = 60_000)]
    public async Task MonteCarloPi_OneProcessWithSystemRandom_RepeatsTheSequentialRun()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("MonteCarloPi", folder.Path, "--iterations", "50k", "--processes", "1", "--rng", "system", "--stack-size", "256k");

        Assert.True(run.ExitCode == 0, run.ToString());
        double sequential = Estimate(run, "sequential", processes: 1);
        Assert.Equal(sequential, Estimate(run, "threads", processes: 1));
        Assert.Equal(sequential, Estimate(run, "async", processes: 1));
        Assert.Contains(run.Lines, line => line.Contains("System.Random(seed)", StringComparison.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    public async Task MonteCarloPi_UnknownMode_ExitsWithUsageError()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("MonteCarloPi", folder.Path, "--mode", "quantum");

        Assert.True(run.ExitCode == 2, run.ToString());
        Assert.Contains("--mode", run.Error, StringComparison.Ordinal);
    }

    [Fact(Timeout = 60_000)]
    public async Task CommsTime_TinyRunOfEveryProcessChannelAndDeltaKind_DeliversInOrderAndEndsByPoison()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("CommsTime", folder.Path, "--iterations", "200", "--rounds", "2", "--warm-up-ms", "0", "--delta", "all");

        Assert.True(run.ExitCode == 0, run.ToString());
        foreach (string processes in new[] { "threads", "async" })
        {
            foreach (string channel in new[] { "One2One", "Any2One", "One2Any", "Any2Any" })
            {
                foreach (string delta in new[] { "seq", "par" })
                {
                    string[] row = Assert.Single(run.Lines, line => Fields(line) is [var p, var c, var d, ..] && p == processes && c == channel && d == delta)
                        .Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    Assert.Equal(7, row.Length);

                    // us/iteration = 4 x us/communication = 12 x us/context switch (as printed, rounded to 3 decimals).
                    double iteration = double.Parse(row[3], CultureInfo.InvariantCulture);
                    Assert.True(iteration > 0, run.ToString());
                    Assert.Equal(iteration / 4, double.Parse(row[4], CultureInfo.InvariantCulture), 0.001);
                    Assert.Equal(iteration / 12, double.Parse(row[5], CultureInfo.InvariantCulture), 0.001);
                }
            }
        }

        Assert.Contains("Every ring delivered its numbers in order and ended by poison.", run.Lines);
    }

    [Fact(Timeout = 60_000)]
    public async Task Mandelbrot_TinyRowsAsync_WritesAValidPngOfTheSet()
    {
        using var folder = new TempFolder();
        const int Width = 64, Height = 48;

        SampleRunner.Result run = await RunAsync("Mandelbrot", folder.Path, "--width", $"{Width}", "--height", $"{Height}", "--max-iterations", "100", "--out", "tiny.png");

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains(run.Lines, line => line.StartsWith("rows, async processes", StringComparison.Ordinal) && line.EndsWith(" 49", StringComparison.Ordinal));
        Assert.Contains(run.Lines, line => line.Contains("computing: 100% (48/48 rows)", StringComparison.Ordinal));

        using SKBitmap? png = SKBitmap.Decode(Path.Combine(folder.Path, "tiny.png"));
        Assert.True(png is not null, "tiny.png is not a PNG that SkiaSharp decodes.");
        Assert.Equal((Width, Height), (png.Width, png.Height));

        // c = -0.23 - 0.03i lies in the main cardioid: black. The top-left corner, c = -2.5 + 1.3i, escapes at once: not black.
        Assert.Equal(SKColors.Black, png.GetPixel(41, Height / 2));
        Assert.NotEqual(SKColors.Black, png.GetPixel(0, 0));
        Assert.Equal(255, png.GetPixel(0, 0).Alpha);
    }

    [Fact(Timeout = 60_000)]
    public async Task Mandelbrot_TinyCompare_EveryVariantComputesTheSamePicture()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("Mandelbrot", folder.Path, "--width", "40", "--height", "30", "--max-iterations", "50", "--compare", "--quiet", "--out", "compare.png");

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains(run.Lines, line => line.StartsWith("sequential", StringComparison.Ordinal));
        Assert.Contains(run.Lines, line => line.StartsWith("pixels, async processes", StringComparison.Ordinal) && line.EndsWith(" 1,201", StringComparison.Ordinal));
        Assert.Contains(run.Lines, line => line.StartsWith("rows, thread processes", StringComparison.Ordinal) && line.EndsWith(" 31", StringComparison.Ordinal));
        Assert.Contains("All versions computed the same picture.", run.Lines);
        Assert.DoesNotContain(run.Lines, line => line.Contains("computing:", StringComparison.Ordinal));
        Assert.True(File.Exists(Path.Combine(folder.Path, "compare.png")));
    }

    [Fact(Timeout = 60_000)]
    public async Task Mandelbrot_PerPixelThreadsBeyondLimit_RefusesWithUsageError()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("Mandelbrot", folder.Path, "--width", "200", "--height", "100", "--per-pixel", "--threads", "--out", "never.png");

        Assert.True(run.ExitCode == 2, run.ToString());
        Assert.Contains("20,000 thread processes", run.Error, StringComparison.Ordinal);
        Assert.False(File.Exists(Path.Combine(folder.Path, "never.png")));
    }

    [Fact(Timeout = 60_000)]
    public async Task WorkerPool_DefaultRun_RunsEveryJobAndCountsPrimes()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("WorkerPool", folder.Path);

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains(run.Lines, line => line.StartsWith("12 of 12 jobs done", StringComparison.Ordinal)
            && line.EndsWith("there are 11301 primes up to 120000.", StringComparison.Ordinal));
    }

    private async Task<SampleRunner.Result> RunAsync(string sample, string workingDirectory, params string[] arguments)
    {
        SampleRunner.Result run = await SampleRunner.RunAsync(sample, workingDirectory, arguments);
        output.WriteLine($"{sample} {string.Join(' ', arguments)}: {run}");
        return run;
    }

    private static string[] Fields(string line) => line.Split(' ', StringSplitOptions.RemoveEmptyEntries);

    /// <summary>The estimate printed in the row of <paramref name="mode"/>: mode, processes, estimate, error, median time, time range, speedup.</summary>
    private static double Estimate(SampleRunner.Result run, string mode, int processes)
    {
        string[] row = Fields(Assert.Single(run.Lines, line => Fields(line) is [var m, ..] && m == mode));
        Assert.Equal(7, row.Length);
        Assert.Equal(processes.ToString(CultureInfo.InvariantCulture), row[1]);
        return double.Parse(row[2], CultureInfo.InvariantCulture);
    }
}
