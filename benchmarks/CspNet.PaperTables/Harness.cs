using System.Diagnostics;
using System.Globalization;
using System.Runtime;
using System.Runtime.InteropServices;
using System.Text;
using CspNet.Benchmarks.Papers;

namespace CspNet.PaperTables;

/// <summary>Timings of one measurement, in milliseconds.</summary>
internal sealed class Stats(IReadOnlyList<double> samples)
{
    internal IReadOnlyList<double> Samples { get; } = samples;

    internal double Median
    {
        get
        {
            double[] sorted = [.. Samples];
            Array.Sort(sorted);
            int middle = sorted.Length / 2;
            return sorted.Length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
        }
    }

    internal double Min => Samples.Min();

    internal double Max => Samples.Max();

    /// <summary>Spread of the samples around the median, in percent ((max - min) / median).</summary>
    internal double SpreadPercent => Median == 0 ? 0 : 100 * (Max - Min) / Median;

    internal Stats Scale(double factor) => new(Samples.Select(s => s * factor).ToArray());
}

/// <summary>The harness: warm-up, timed repetitions, median; machine facts; plain-text tables.</summary>
internal static class Harness
{
    internal static readonly CultureInfo Culture = CultureInfo.InvariantCulture;

    /// <summary>Least time spent warming up before a measurement (quick mode: less).</summary>
    internal static TimeSpan WarmupTime { get; set; } = TimeSpan.FromMilliseconds(300);

    /// <summary>
    /// Runs <paramref name="warmup"/> at least 3 times and for at least <see cref="WarmupTime"/>
    /// (JIT tiering needs 30 calls and 100 ms without new tier-0 code; pool threads get created),
    /// lets the background JIT finish, then times <paramref name="run"/> <paramref name="reps"/>
    /// times. A full collection precedes every timed run so that one run's garbage is not
    /// collected in the next.
    /// </summary>
    /// <param name="warmup">One warm-up run (usually smaller than <paramref name="run"/>).</param>
    /// <param name="run">One timed run.</param>
    /// <param name="reps">Timed runs.</param>
    /// <param name="warmupFactor">Multiplies <see cref="WarmupTime"/> (async ping-pong needs about a second to settle).</param>
    internal static Stats Measure(Action warmup, Action run, int reps, double warmupFactor = 1)
    {
        var warm = Stopwatch.StartNew();
        TimeSpan least = WarmupTime * warmupFactor;
        int calls = 0;
        do
        {
            warmup();
            calls++;
        }
        while (calls < 1000 && (calls < 3 || warm.Elapsed < least));

        Thread.Sleep(WarmupTime / 2);
        var samples = new double[reps];
        for (int i = 0; i < reps; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            long start = Stopwatch.GetTimestamp();
            run();
            samples[i] = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
        }

        return new Stats(samples);
    }

    /// <summary>The 1-, 5- and 15-minute load averages (Linux), or "n/a".</summary>
    internal static string LoadAverage()
    {
        try
        {
            string[] parts = File.ReadAllText("/proc/loadavg").Split(' ');
            return $"{parts[0]} {parts[1]} {parts[2]}";
        }
        catch (IOException)
        {
            return "n/a";
        }
        catch (UnauthorizedAccessException)
        {
            return "n/a";
        }
    }

    internal static string MachineInfo()
    {
        var text = new StringBuilder();
        text.AppendLine(Culture, $"Date:     {DateTime.Now:yyyy-MM-dd HH:mm:ss zzz} ({DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC)");
        text.AppendLine(Culture, $"Machine:  {CpuModel()}, {Environment.ProcessorCount} logical cores, {FormatGiB(MachineMemory.TotalBytes())} RAM ({FormatGiB(MachineMemory.AvailableBytes())} available at start)");
        text.AppendLine(Culture, $"OS:       {RuntimeInformation.OSDescription} ({RuntimeInformation.OSArchitecture})");
        text.AppendLine(Culture, $".NET:     {RuntimeInformation.FrameworkDescription} ({RuntimeInformation.RuntimeIdentifier}), {(GCSettings.IsServerGC ? "server" : "workstation")} GC, {GCSettings.LatencyMode}, {(Debugger.IsAttached ? "debugger attached" : "no debugger")}, {BuildConfiguration()} build");
        text.Append(Culture, $"Load:     {LoadAverage()} (1/5/15-minute load averages at start)");
        return text.ToString();
    }

    internal static string FormatGiB(long bytes) =>
        bytes < 0 ? "?" : (bytes / (double)(1L << 30)).ToString("F1", Culture) + " GiB";

    internal static string Ms(double ms) =>
        ms >= 100 ? ms.ToString("N0", Culture) : ms >= 10 ? ms.ToString("N1", Culture) : ms >= 1 ? ms.ToString("N2", Culture) : ms.ToString("N3", Culture);

    internal static string N(double value, int decimals = 0) => value.ToString("N" + decimals.ToString(Culture), Culture);

    /// <summary>Prints a table: the first column left-aligned, the others right-aligned.</summary>
    internal static void PrintTable(IReadOnlyList<string> header, IEnumerable<IReadOnlyList<string>> rows)
    {
        List<IReadOnlyList<string>> all = [header, .. rows];
        int columns = header.Count;
        int[] widths = new int[columns];
        foreach (IReadOnlyList<string> row in all)
        {
            for (int c = 0; c < columns; c++)
            {
                widths[c] = Math.Max(widths[c], c < row.Count ? row[c].Length : 0);
            }
        }

        for (int r = 0; r < all.Count; r++)
        {
            var line = new StringBuilder("  ");
            for (int c = 0; c < columns; c++)
            {
                string cell = c < all[r].Count ? all[r][c] : "";
                line.Append(c == 0 ? cell.PadRight(widths[c]) : cell.PadLeft(widths[c]));
                line.Append(c == columns - 1 ? "" : "  ");
            }

            Console.WriteLine(line.ToString().TrimEnd());
            if (r == 0)
            {
                Console.WriteLine("  " + new string('-', widths.Sum() + (2 * (columns - 1))));
            }
        }
    }

    private static string CpuModel()
    {
        try
        {
            string? line = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal));
            if (line is not null)
            {
                return line[(line.IndexOf(':', StringComparison.Ordinal) + 1)..].Trim();
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }

        return RuntimeInformation.ProcessArchitecture.ToString();
    }

    private static string BuildConfiguration()
    {
#if DEBUG
        return "DEBUG (numbers are not meaningful: use -c Release)";
#else
        return "Release";
#endif
    }
}
