using System.Globalization;
using CspNet.Benchmarks.Charts;
using ScottPlot;

namespace CspNet.Remote.Benchmarks.Charts;

/// <summary>A chart written: its file and the legend of each series drawn.</summary>
internal sealed record Chart(string Path, IReadOnlyList<string> Series);

/// <summary>
/// Log-log charts of <see cref="NamedWriteLatency"/> and <see cref="NamedThroughput"/> by value
/// size: the named channel beside its raw gRPC and raw TCP baselines of the same run, and JCSP
/// net2's figures measured on this machine in an earlier sitting (dashed: not from this run). Each
/// implementation has one colour in both. <see cref="SittingCharts"/> draws JCSP measured in the same sitting.
/// </summary>
internal static class NamedCharts
{
    /// <summary>The latency chart's file name.</summary>
    internal const string LatencyFile = "named-latency.png";

    /// <summary>The throughput chart's file name.</summary>
    internal const string ThroughputFile = "named-throughput.png";

    private static readonly ScottPlot.Palettes.Category10 s_palette = new();

    /// <summary>JCSP net2, a synchronous remote write (us), measured on this machine in an earlier sitting; no 1 KB figure.</summary>
    private static readonly (double Size, double Microseconds)[] s_jcspWrite = [(1, 113), (64 << 10, 124), (1 << 20, 683), (4 << 20, 2200)];

    /// <summary>
    /// JCSP net2 streaming 1-4 MB values at 1.5-1.9 GB/s (that sitting gave the range only; the
    /// larger value is taken as the faster).
    /// </summary>
    private static readonly (double Size, double MegabytesPerSecond)[] s_jcspStreaming = [(1 << 20, 1500), (4 << 20, 1900)];

    /// <summary>The colour of CspNet's named channel.</summary>
    internal static Color NamedColor => s_palette.GetColor(0);

    /// <summary>The colour of the raw gRPC stream.</summary>
    internal static Color GrpcColor => s_palette.GetColor(1);

    /// <summary>The colour of the raw TCP socket.</summary>
    internal static Color TcpColor => s_palette.GetColor(2);

    /// <summary>The colour of JCSP net2's figures.</summary>
    internal static Color JcspColor => s_palette.GetColor(3);

    /// <summary>The latency chart, or null when the reports hold no <see cref="NamedWriteLatency"/> run.</summary>
    internal static Chart? WriteLatency(string directory, BenchmarkReports reports, string? note)
    {
        const string Type = nameof(NamedWriteLatency);
        return Draw(
            reports,
            Type,
            "Named channel: one synchronous write (value there, ack back)",
            "us per write (log scale)",
            [
                ("CspNet named write", nameof(NamedWriteLatency.NamedWrite), NamedColor),
                ("raw gRPC stream, write + ack", nameof(NamedWriteLatency.RawGrpcStream), GrpcColor),
                ("raw TCP socket, write + ack", nameof(NamedWriteLatency.RawTcpSocket), TcpColor),
            ],
            (size, ns) => ns / 1000,
            ("JCSP net2 (earlier sitting, this machine)", s_jcspWrite),
            directory,
            LatencyFile,
            note);
    }

    /// <summary>The throughput chart, or null when the reports hold no <see cref="NamedThroughput"/> run.</summary>
    internal static Chart? WriteThroughput(string directory, BenchmarkReports reports, string? note)
    {
        const string Type = nameof(NamedThroughput);
        return Draw(
            reports,
            Type,
            $"Buffered named channel: throughput, {NamedThroughput.Burst}-value bursts",
            "MB/s (log scale)",
            [
                ($"CspNet named, FifoBuffer({NamedThroughput.BufferCapacity})", nameof(NamedThroughput.NamedBuffered), NamedColor),
                ("raw gRPC stream", nameof(NamedThroughput.RawGrpcStream), GrpcColor),
                ("raw TCP socket", nameof(NamedThroughput.RawTcpSocket), TcpColor),
            ],
            // Bytes per nanosecond are GB/s.
            (size, ns) => size / ns * 1000,
            ("JCSP net2 streaming (earlier sitting, this machine)", s_jcspStreaming),
            directory,
            ThroughputFile,
            note);
    }

    private static Chart? Draw(
        BenchmarkReports reports,
        string type,
        string title,
        string yLabel,
        (string Legend, string Method, Color Color)[] measured,
        Func<int, double, double> value,
        (string Legend, (double Size, double Value)[] Points) jcsp,
        string directory,
        string fileName,
        string? note)
    {
        var plot = new Plot();
        plot.Title(title);
        plot.XLabel("value size (log scale)");
        plot.YLabel(yLabel);
        var legends = new List<string>();
        var sizes = new SortedSet<double>();
        var values = new List<double>();
        foreach ((string legend, string method, Color color) in measured)
        {
            IReadOnlyList<(int Size, double MedianNs)> medians = reports.Medians(type, method);
            if (medians.Count > 0)
            {
                (double Size, double Value)[] points = [.. medians.Select(m => ((double)m.Size, value(m.Size, m.MedianNs)))];
                ChartKit.AddLogLog(plot, legend, points, line: true, color);
                legends.Add(legend);
                sizes.UnionWith(points.Select(p => p.Size));
                values.AddRange(points.Select(p => p.Value));
            }
        }

        if (legends.Count == 0)
        {
            return null;
        }

        // Figures from another program, not measured by this run: dashed.
        ChartKit.AddLogLog(plot, jcsp.Legend, jcsp.Points, line: true, JcspColor).LinePattern = LinePattern.Dashed;
        legends.Add(jcsp.Legend);
        sizes.UnionWith(jcsp.Points.Select(p => p.Size));
        values.AddRange(jcsp.Points.Select(p => p.Value));

        string caption = reports.Describe(type) + "; medians" + (string.IsNullOrWhiteSpace(note) ? "" : "\n" + note);
        Finish(plot, sizes, values, legendRoom: 0.6, caption);
        return new Chart(ChartKit.Save(plot, directory, fileName), legends);
    }

    /// <summary>
    /// Size ticks, log value ticks, and room above the data for the legend (top left,
    /// <paramref name="legendRoom"/> of the data's decades) and below it for the caption (bottom right):
    /// the charts rise from lower left to upper right.
    /// </summary>
    internal static void Finish(Plot plot, IEnumerable<double> sizes, IReadOnlyCollection<double> values, double legendRoom, string caption)
    {
        plot.Axes.Bottom.SetTicks([.. sizes.Select(Math.Log10)], [.. sizes.Select(s => SizeLabel((long)s))]);
        ChartKit.LogTicks(null, plot.Axes.Left);
        double low = Math.Log10(values.Where(v => v > 0).Min());
        double high = Math.Log10(values.Max());
        double range = Math.Max(high - low, 1);
        plot.Axes.SetLimitsY(low - (0.4 * range), high + (legendRoom * range));
        plot.ShowLegend(Alignment.UpperLeft);
        var annotation = plot.Add.Annotation(caption, Alignment.LowerRight);
        annotation.LabelFontSize = 10;
        annotation.LabelBackgroundColor = Colors.White;
        annotation.LabelBorderColor = Colors.Gray;
        annotation.LabelShadowColor = Colors.Transparent;
    }

    /// <summary>1 B, 1 KB, 64 KB, 1 MB, 4 MB: the sizes as the benchmark documentation writes them (KB = 1,024 bytes).</summary>
    internal static string SizeLabel(long bytes) => bytes switch
    {
        >= 1 << 20 when bytes % (1 << 20) == 0 => (bytes >> 20).ToString(CultureInfo.InvariantCulture) + " MB",
        >= 1 << 10 when bytes % (1 << 10) == 0 => (bytes >> 10).ToString(CultureInfo.InvariantCulture) + " KB",
        _ => bytes.ToString(CultureInfo.InvariantCulture) + " B",
    };
}
