using System.CommandLine;

namespace CspNet.Remote.Benchmarks.Charts;

/// <summary>
/// <c>charts</c>: draws the named-channel charts (<see cref="NamedCharts"/>) from a finished run's
/// JSON reports, so the pictures can be made again from any run without measuring anything.
/// </summary>
internal static class ChartsCommand
{
    /// <summary>The command's name, the program's first argument.</summary>
    internal const string Name = "charts";

    /// <summary>The command: its options, and drawing with their values.</summary>
    internal static Command Create()
    {
        var results = new Option<string>("--results")
        {
            Description = "Folder of the run's BenchmarkDotNet JSON reports (*-report*.json).",
            HelpName = "DIR",
            DefaultValueFactory = _ => Path.Combine("BenchmarkDotNet.Artifacts", "results"),
        };
        var output = new Option<string>("--out")
        {
            Description = "Folder for the PNG files (created if missing).",
            HelpName = "DIR",
            DefaultValueFactory = _ => Path.Combine("BenchmarkDotNet.Artifacts", "charts"),
        };
        var note = new Option<string?>("--note")
        {
            Description = "A second caption line on each chart, such as the load average during the run.",
            HelpName = "TEXT",
        };
        var crossproc = new Option<string?>("--crossproc")
        {
            Description = "The saved standard output of a crossproc run: draws crossproc-latency.png and crossproc-throughput.png from it and --jcsp instead of the reports.",
            HelpName = "FILE",
        };
        var jcsp = new Option<string?>("--jcsp")
        {
            Description = "The saved standard output of jcsp/run.sh from the same sitting as --crossproc.",
            HelpName = "FILE",
        };
        var command = new Command(Name, "Draws named channel latency and throughput by value size: from a finished BenchmarkDotNet run's reports (NamedWriteLatency, NamedThroughput), or from one sitting's crossproc and JCSP net2 tables.")
        {
            results, output, note, crossproc, jcsp,
        };
        command.SetAction(result => result.GetValue(crossproc) is { } crossprocFile
            ? RunSitting(crossprocFile, result.GetValue(jcsp), result.GetRequiredValue(output), result.GetValue(note))
            : Run(result.GetRequiredValue(results), result.GetRequiredValue(output), result.GetValue(note)));
        return command;
    }

    private static int RunSitting(string crossprocFile, string? jcspFile, string outputDirectory, string? note)
    {
        if (jcspFile is null)
        {
            Console.Error.WriteLine("error: --crossproc needs --jcsp: the JCSP net2 harness's output from the same sitting (jcsp/README.md).");
            return 1;
        }

        try
        {
            foreach (Chart chart in SittingCharts.Draw(crossprocFile, jcspFile, outputDirectory, note))
            {
                Console.WriteLine($"Chart: {chart.Path} ({string.Join("; ", chart.Series)})");
            }

            return 0;
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException or InvalidDataException)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 1;
        }
    }

    private static int Run(string resultsDirectory, string outputDirectory, string? note)
    {
        BenchmarkReports reports;
        try
        {
            reports = BenchmarkReports.Load(resultsDirectory);
        }
        catch (Exception e) when (e is DirectoryNotFoundException or InvalidDataException)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 1;
        }

        int written = 0;
        foreach (Chart? chart in new[] { NamedCharts.WriteLatency(outputDirectory, reports, note), NamedCharts.WriteThroughput(outputDirectory, reports, note) })
        {
            if (chart is not null)
            {
                Console.WriteLine($"Chart: {chart.Path} ({string.Join("; ", chart.Series)})");
                written++;
            }
        }

        if (written == 0)
        {
            Console.Error.WriteLine($"error: no NamedWriteLatency or NamedThroughput results in {resultsDirectory}"
                + $" (classes found: {(reports.Classes.Any() ? string.Join(", ", reports.Classes) : "none")}).");
            return 1;
        }

        return 0;
    }
}
