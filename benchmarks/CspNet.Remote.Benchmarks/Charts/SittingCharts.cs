using System.Globalization;
using System.Text.RegularExpressions;
using CspNet.Benchmarks.Charts;
using ScottPlot;

namespace CspNet.Remote.Benchmarks.Charts;

/// <summary>
/// Charts of one sitting between programs: the tables <c>crossproc</c> prints (the named channel
/// with the bulk lane on and off, raw TCP, raw gRPC) and the tables of the JCSP net2 harness
/// (<c>jcsp/run.sh</c>) taken right before or after it, drawn by value size on log-log axes. Every
/// series comes from the same sitting, so the lines compare figures of the same minutes.
/// </summary>
internal static partial class SittingCharts
{
    /// <summary>The synchronous write chart's file name.</summary>
    internal const string LatencyFile = "crossproc-latency.png";

    /// <summary>The stream chart's file name.</summary>
    internal const string ThroughputFile = "crossproc-throughput.png";

    private static readonly ScottPlot.Palettes.Category10 s_palette = new();

    /// <summary>Draws both charts from the saved standard output of <c>crossproc</c> and of <c>jcsp/run.sh</c>.</summary>
    /// <exception cref="InvalidDataException">A file holds none of the tables these programs print.</exception>
    internal static IReadOnlyList<Chart> Draw(string crossprocOutput, string jcspOutput, string directory, string? note)
    {
        Sitting named = Parse(File.ReadAllText(crossprocOutput), crossprocOutput);
        Sitting jcsp = Parse(File.ReadAllText(jcspOutput), jcspOutput);
        string caption = string.Join("\n", new[] { "Two OS programs on 127.0.0.1, one sitting; medians", note }.Where(s => !string.IsNullOrWhiteSpace(s)));
        var charts = new List<Chart>();
        Chart? latency = DrawOne(
            "One synchronous write until the reader has the value",
            "us per write (log scale)",
            [
                ("CspNet named write", named.Find("named sync write"), s_palette.GetColor(0), LinePattern.Solid),
                ("CspNet named, bulk lane off", named.Find("named, lane off"), s_palette.GetColor(0), LinePattern.Dotted),
                ("raw TCP write + ack", named.Find("raw TCP write+ack"), s_palette.GetColor(2), LinePattern.Solid),
                ("raw Unix socket write + ack", named.Find("raw Unix socket write+ack"), s_palette.GetColor(2), LinePattern.Dashed),
                ("raw gRPC write + ack", named.Find("raw gRPC write+ack"), s_palette.GetColor(1), LinePattern.Solid),
                ("JCSP net2 write", jcsp.Find("JCSP net2 sync write"), s_palette.GetColor(3), LinePattern.Solid),
            ],
            directory,
            LatencyFile,
            caption);
        Chart? throughput = DrawOne(
            "A buffered stream of values (bursts of 64)",
            "MB/s (log scale)",
            [
                ("CspNet named, buffered", named.Find("named buffered stream"), s_palette.GetColor(0), LinePattern.Solid),
                ("CspNet named, bulk lane off", named.Find("named stream, lane off"), s_palette.GetColor(0), LinePattern.Dotted),
                ("raw TCP stream", named.Find("raw TCP stream"), s_palette.GetColor(2), LinePattern.Solid),
                ("raw Unix socket stream", named.Find("raw Unix socket stream"), s_palette.GetColor(2), LinePattern.Dashed),
                ("raw gRPC stream", named.Find("raw gRPC stream"), s_palette.GetColor(1), LinePattern.Solid),
                ("JCSP net2 asyncWrite", jcsp.Find("JCSP net2 asyncWrite stream"), s_palette.GetColor(3), LinePattern.Solid),
            ],
            directory,
            ThroughputFile,
            caption);
        charts.AddRange(new[] { latency, throughput }.OfType<Chart>());
        if (charts.Count == 0)
        {
            throw new InvalidDataException($"Neither {crossprocOutput} nor {jcspOutput} holds a table of crossproc or jcsp/run.sh: give their saved standard output.");
        }

        return charts;
    }

    /// <summary>
    /// The Markdown tables of a program's output: for each column header, the figure per value size.
    /// A cell is read up to its unit ("116.1 µs", "1,020 MB/s"); ratio columns ("1.23x") are kept too
    /// but never drawn.
    /// </summary>
    internal static Sitting Parse(string text, string source)
    {
        var series = new Dictionary<string, List<(double Size, double Value)>>(StringComparer.Ordinal);
        string[]? header = null;
        foreach (string raw in text.Split('\n'))
        {
            string line = raw.Trim();
            if (!line.StartsWith('|'))
            {
                header = null;
                continue;
            }

            string[] cells = [.. line.Trim('|').Split('|').Select(c => c.Trim())];
            if (header is null)
            {
                header = cells;
                continue;
            }

            if (cells[0].StartsWith("---", StringComparison.Ordinal) || cells[0].StartsWith(":--", StringComparison.Ordinal) || cells[0].EndsWith("--:", StringComparison.Ordinal))
            {
                continue;
            }

            if (ParseSize(cells[0]) is not { } size)
            {
                continue;
            }

            for (int i = 1; i < Math.Min(cells.Length, header.Length); i++)
            {
                Match figure = FigurePattern().Match(cells[i]);
                if (figure.Success)
                {
                    double value = double.Parse(figure.Groups[1].Value.Replace(",", "", StringComparison.Ordinal), CultureInfo.InvariantCulture);
                    if (!series.TryGetValue(header[i], out List<(double, double)>? points))
                    {
                        series[header[i]] = points = [];
                    }

                    points.Add((size, value));
                }
            }
        }

        return new Sitting(source, series);
    }

    private static double? ParseSize(string cell)
    {
        Match match = SizePattern().Match(cell);
        if (!match.Success)
        {
            return null;
        }

        double number = double.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture);
        return match.Groups[2].Value switch
        {
            "KB" => number * 1024,
            "MB" => number * 1024 * 1024,
            _ => number,
        };
    }

    private static Chart? DrawOne(
        string title,
        string yLabel,
        (string Legend, IReadOnlyList<(double Size, double Value)> Points, Color Color, LinePattern Pattern)[] series,
        string directory,
        string fileName,
        string caption)
    {
        var drawn = series.Where(s => s.Points.Count > 0).ToArray();
        if (drawn.Length == 0)
        {
            return null;
        }

        var plot = new Plot();
        plot.Title(title);
        plot.XLabel("value size (log scale)");
        plot.YLabel(yLabel);
        var sizes = new SortedSet<double>();
        var values = new List<double>();
        foreach ((string legend, IReadOnlyList<(double Size, double Value)> points, Color color, LinePattern pattern) in drawn)
        {
            ChartKit.AddLogLog(plot, legend, points, line: true, color).LinePattern = pattern;
            sizes.UnionWith(points.Select(p => p.Size));
            values.AddRange(points.Select(p => p.Value));
        }

        // The five-line legend wants more room above the data than the report charts' three or four.
        NamedCharts.Finish(plot, sizes, values, legendRoom: 1.1, caption);
        return new Chart(ChartKit.Save(plot, directory, fileName), [.. drawn.Select(s => s.Legend)]);
    }

    [GeneratedRegex(@"^([0-9][0-9,]*(?:\.[0-9]+)?)\s*(?:µs|us|MB/s)$", RegexOptions.CultureInvariant)]
    private static partial Regex FigurePattern();

    [GeneratedRegex(@"^([0-9]+)\s*(B|KB|MB)$", RegexOptions.CultureInvariant)]
    private static partial Regex SizePattern();

    /// <summary>The tables of one program's output: figures by column header and value size.</summary>
    internal sealed record Sitting(string Source, IReadOnlyDictionary<string, List<(double Size, double Value)>> Series)
    {
        /// <summary>The column's figures by size, or none if the output has no such column.</summary>
        internal IReadOnlyList<(double Size, double Value)> Find(string header) =>
            Series.TryGetValue(header, out List<(double Size, double Value)>? points) ? points : [];
    }
}
