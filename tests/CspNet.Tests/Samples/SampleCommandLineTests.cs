using Xunit.Abstractions;

namespace CspNet.Tests.Samples;

/// <summary>
/// The samples' command lines (System.CommandLine with samples/Shared/CommandLine.cs): --help,
/// size suffixes, usage errors (a message on standard error naming the option, exit code 2) and
/// the hidden commands the samples start themselves with. Each run is a child process of a second
/// or less: nothing is computed beyond a tiny ring.
/// </summary>
public class SampleCommandLineTests(ITestOutputHelper output)
{
    [Fact(Timeout = 60_000)]
    public async Task MonteCarloPi_Help_ListsEveryOptionAndTheExamplesButNotThePoolCommand()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("MonteCarloPi", folder.Path, "--help");

        Assert.True(run.ExitCode == 0, run.ToString());
        foreach (string option in new[] { "--iterations", "--processes", "--mode", "--pools", "--pool-workers", "--repeat", "--warm-up", "--stack-size", "--seed", "--rng", "--no-barrier" })
        {
            Assert.Contains(option, run.Output, StringComparison.Ordinal);
        }

        Assert.Contains("[default: 20000000]", run.Output, StringComparison.Ordinal);
        Assert.Contains("-- --mode dist --iterations 400M --repeat 3", run.Output, StringComparison.Ordinal);
        Assert.DoesNotContain(run.Lines, line => line.TrimStart().StartsWith("pool", StringComparison.Ordinal));
    }

    [Fact(Timeout = 60_000)]
    public async Task CommsTime_IterationsWithSuffix_RunsThatManyPerRound()
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync("CommsTime", folder.Path,
            "--iterations", "1k", "--rounds", "1", "--warm-up", "10", "--warm-up-ms", "0", "--processes", "async", "--channel", "One2One");

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains(run.Lines, line => line.StartsWith("1,000 iterations per round, best of 1 rounds after at least 10 warm-up", StringComparison.Ordinal));
        Assert.Single(run.Lines, line => line.StartsWith("async ", StringComparison.Ordinal));
    }

    [Theory(Timeout = 60_000)]
    [InlineData("CommsTime", "--channel", "one2many", "--channel must be one2one, any2one, one2any, any2any, all, not 'one2many'.")]
    [InlineData("CommsTime", "--iterations", "3X", "--iterations: unknown suffix in '3X' (use k, M or G).")]
    [InlineData("Mandelbrot", "--width", "50001", "--width must be between 1 and 50,000; got 50001.")]
    [InlineData("MonteCarloPi", "--bogus", "1", "--bogus")]
    public async Task Sample_BadOption_ExitsWithUsageErrorNamingIt(string sample, string option, string value, string message)
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync(sample, folder.Path, option, value);

        Assert.True(run.ExitCode == 2, run.ToString());
        Assert.Contains(message, run.Error, StringComparison.Ordinal);
        Assert.Contains("Run with --help for the options.", run.Error, StringComparison.Ordinal);
        Assert.Equal("", run.Output);
    }

    [Theory(Timeout = 60_000)]
    [InlineData("MonteCarloPi", "--iterations 2 --processes 3", "--iterations must be at least --processes.")]
    [InlineData("Mandelbrot", "--width 30k --height 30000", "30000x30000 is too large for one picture in memory.")]
    public async Task Sample_OptionsThatDoNotFitTogether_ExitWithUsageError(string sample, string arguments, string message)
    {
        using var folder = new TempFolder();

        SampleRunner.Result run = await RunAsync(sample, folder.Path, arguments.Split(' '));

        Assert.True(run.ExitCode == 2, run.ToString());
        Assert.Contains(message, run.Error, StringComparison.Ordinal);
        Assert.Equal("", run.Output);
    }

    [Fact(Timeout = 60_000)]
    public async Task MonteCarloPi_PoolCommandWithoutAUri_ExitsWithUsageError()
    {
        using var folder = new TempFolder();

        // The hidden command --mode dist starts its pool programs with; a bad NameServer is refused before anything starts.
        SampleRunner.Result run = await RunAsync("MonteCarloPi", folder.Path, "pool", "not-a-uri", "pool-a", "2");

        Assert.True(run.ExitCode == 2, run.ToString());
        Assert.Contains("<nameServerUri> must be an absolute URI", run.Error, StringComparison.Ordinal);
    }

    private async Task<SampleRunner.Result> RunAsync(string sample, string workingDirectory, params string[] arguments)
    {
        SampleRunner.Result run = await SampleRunner.RunAsync(sample, workingDirectory, arguments);
        output.WriteLine($"{sample} {string.Join(' ', arguments)}: {run}");
        return run;
    }
}
