using System.Globalization;
using System.Text.Json;

namespace CspNet.Remote.Benchmarks.Charts;

/// <summary>
/// The results of BenchmarkDotNet runs as its JSON exporter wrote them (<c>*-report*.json</c> in a
/// results folder, <c>BenchmarkDotNet.Artifacts/results</c> by default): per benchmark class, the
/// median of each method at each <see cref="RemoteBenchmark.Size"/>.
/// </summary>
/// <remarks>
/// A class found in several files (a brief and a full report of one run, or files of several runs
/// copied together) is taken from the newest file only, so a chart never mixes two runs of a class.
/// </remarks>
internal sealed class BenchmarkReports
{
    private static readonly JsonSerializerOptions s_json = new() { PropertyNameCaseInsensitive = true };

    private readonly Dictionary<string, (Report Report, DateTime Written)> _byClass;

    private BenchmarkReports(Dictionary<string, (Report Report, DateTime Written)> byClass) => _byClass = byClass;

    /// <summary>The benchmark classes found, by their simple names (NamedWriteLatency...).</summary>
    internal IEnumerable<string> Classes => _byClass.Keys;

    /// <summary>Reads every JSON report in <paramref name="directory"/>.</summary>
    /// <exception cref="DirectoryNotFoundException">The folder does not exist.</exception>
    /// <exception cref="InvalidDataException">A file is not a BenchmarkDotNet JSON report.</exception>
    internal static BenchmarkReports Load(string directory)
    {
        if (!Directory.Exists(directory))
        {
            throw new DirectoryNotFoundException($"No results folder {directory}: run the benchmarks first (README.md), or name the folder with --results.");
        }

        var byClass = new Dictionary<string, (Report Report, DateTime Written)>(StringComparer.Ordinal);
        foreach (string path in Directory.EnumerateFiles(directory, "*-report*.json"))
        {
            DateTime written = File.GetLastWriteTimeUtc(path);
            Report report = Read(path);
            foreach (string type in report.Benchmarks.Select(b => b.Type).Distinct())
            {
                if (!byClass.TryGetValue(type, out var known) || known.Written < written)
                {
                    byClass[type] = (report, written);
                }
            }
        }

        return new BenchmarkReports(byClass);
    }

    /// <summary>
    /// The medians of <paramref name="method"/> of class <paramref name="type"/> in nanoseconds per
    /// operation, by size, smallest first; empty when the class or method did not run (or failed).
    /// </summary>
    internal IReadOnlyList<(int Size, double MedianNs)> Medians(string type, string method) =>
        _byClass.TryGetValue(type, out var found)
            ? [.. found.Report.Benchmarks
                .Where(b => b.Type == type && b.Method == method && b.Statistics is { N: > 0 })
                .Select(b => (Size: SizeOf(b), MedianNs: b.Statistics!.Median))
                .OrderBy(m => m.Size)]
            : [];

    /// <summary>
    /// What a chart's caption says about the run of <paramref name="type"/>: the job and when it
    /// ran (from the report's title, which BenchmarkDotNet stamps with the local time the run
    /// started), e.g. "BenchmarkDotNet 0.15.8, job Remote, 2026-11-23 18:38".
    /// </summary>
    internal string Describe(string type)
    {
        if (!_byClass.TryGetValue(type, out var found))
        {
            return "";
        }

        Report report = found.Report;
        string job = report.Benchmarks.Where(b => b.Type == type).Select(JobOf).FirstOrDefault() ?? "?";
        // The title ends with -yyyyMMdd-HHmmss.
        string[] parts = report.Title.Split('-');
        string started = parts.Length >= 3
            && DateTime.TryParseExact(parts[^2] + parts[^1], "yyyyMMddHHmmss", CultureInfo.InvariantCulture, DateTimeStyles.None, out DateTime when)
            ? when.ToString("yyyy-MM-dd HH:mm", CultureInfo.InvariantCulture)
            : "date unknown";
        string version = report.HostEnvironmentInfo?.BenchmarkDotNetVersion is { } v ? " " + v : "";
        return $"BenchmarkDotNet{version}, job {job}, {started}";
    }

    private static Report Read(string path)
    {
        try
        {
            using FileStream file = File.OpenRead(path);
            return JsonSerializer.Deserialize<Report>(file, s_json) is { Title: not null, Benchmarks: not null } report
                ? report
                : throw new InvalidDataException($"{path} is not a BenchmarkDotNet JSON report (no Title or Benchmarks).");
        }
        catch (JsonException e)
        {
            throw new InvalidDataException($"{path} is not a BenchmarkDotNet JSON report: {e.Message}", e);
        }
    }

    /// <summary>The Size parameter, from BenchmarkDotNet's "Size=1024" (several parameters are joined with '&amp;').</summary>
    private static int SizeOf(Benchmark benchmark)
    {
        foreach (string parameter in benchmark.Parameters.Split('&'))
        {
            if (parameter.StartsWith("Size=", StringComparison.Ordinal)
                && int.TryParse(parameter.AsSpan("Size=".Length), NumberStyles.None, CultureInfo.InvariantCulture, out int size))
            {
                return size;
            }
        }

        throw new InvalidDataException($"{benchmark.Type}.{benchmark.Method} has no Size parameter ('{benchmark.Parameters}').");
    }

    /// <summary>The job's id, from a display name such as "NamedWriteLatency.NamedWrite: Remote(IterationCount=10, ...) [Size=1]".</summary>
    private static string? JobOf(Benchmark benchmark)
    {
        string display = benchmark.DisplayInfo ?? "";
        int colon = display.IndexOf(": ", StringComparison.Ordinal);
        if (colon < 0)
        {
            return null;
        }

        string job = display[(colon + 2)..];
        int end = job.IndexOfAny(['(', ' ']);
        return end < 0 ? job : job[..end];
    }

    // The parts of BenchmarkDotNet's JSON report the charts read (BenchmarkDotNet.Exporters.Json).
    private sealed record Report(string Title, Host? HostEnvironmentInfo, List<Benchmark> Benchmarks);

    private sealed record Host(string? BenchmarkDotNetVersion);

    private sealed record Benchmark(string Type, string Method, string Parameters, string? DisplayInfo, Statistics? Statistics);

    private sealed record Statistics(int N, double Median);
}
