using CspNet.Benchmarks.Charts;
using CspNet.Benchmarks.Papers;
using ScottPlot;

namespace CspNet.PaperTables;

/// <summary>One Table 1 row as printed: ms for 500,000 integers around the ring, the papers' and today's.</summary>
internal sealed record Table1Row(string Kind, double Jcsp2006, double CspNet2006, double Threads, double Async, double Stc);

/// <summary>CommsTime as printed: microseconds per iteration, by process kind.</summary>
internal sealed record CommsTimeRow(double Threads, double Async, double Stc);

/// <summary>
/// Writes PNG charts of the tables that ran (option --charts DIR), from the same rows the text
/// tables print, so a chart never shows a figure the table does not.
/// </summary>
internal static class Charts
{
    /// <summary>Table 1: grouped bars per channel kind, the 2006 figures beside today's; returns the file written.</summary>
    internal static string WriteTable1(string directory, IReadOnlyList<Table1Row> rows)
    {
        string[] series = ["JCSP 2006", "CSP.NET 2006", "CspNet threads", "CspNet async", "STC async"];
        double[][] values = [.. rows.Select(r => new[] { r.Jcsp2006, r.CspNet2006, r.Threads, r.Async, r.Stc })];
        return GroupedBars(
            directory,
            "table1-ring.png",
            "CSP.NET Table 1: 500,000 integers around a 3-channel ring",
            "ms (log scale)",
            [.. rows.Select(r => r.Kind)],
            series,
            values);
    }

    /// <summary>CommsTime: bars per implementation, JVMCSP's Table 2 beside today's; returns the file written.</summary>
    internal static string WriteCommsTime(string directory, CommsTimeRow row) =>
        GroupedBars(
            directory,
            "commstime.png",
            "JVMCSP Table 2: CommsTime",
            "us per iteration (log scale)",
            ["us / iteration"],
            ["LiteProc", "JCSP", "JVMCSP", "CspNet threads", "CspNet async", "STC async"],
            [[13.56, 136.00, 7.52, row.Threads, row.Async, row.Stc]]);

    /// <summary>
    /// Live processes against memory: JVMCSP's reported points as a line, CspNet's measured runs as
    /// markers (log-log, since quick runs are thousands of times smaller than the paper's); returns the file written.
    /// </summary>
    internal static string WriteLive(string directory, string fileName, string title, IReadOnlyList<(long Processes, double Gb)> jvmcsp, IReadOnlyList<LiveResult> runs)
    {
        if (runs.Count == 0)
        {
            throw new ArgumentException("No live-process runs to chart: run at least one count (--live or --jvmcsp).", nameof(runs));
        }

        var plot = new Plot();
        plot.Title(title);
        plot.XLabel("processes (log scale)");
        plot.YLabel("memory, GB (log scale)");
        ChartKit.AddLogLog(plot, "JVMCSP (paper)", jvmcsp.Select(p => ((double)p.Processes, p.Gb)), line: true);
        ChartKit.AddLogLog(
            plot,
            "CspNet live bytes (this machine)",
            runs.Select(r => ((double)r.Processes, Math.Max(r.LiveBytesParked - r.LiveBytesBefore, 1) / 1e9)),
            line: false);
        ChartKit.LogTicks(plot.Axes.Bottom, plot.Axes.Left);
        plot.ShowLegend(Alignment.UpperLeft);
        return ChartKit.Save(plot, directory, fileName);
    }

    /// <summary>Grouped bars on a log scale, one colour per series; returns the file written.</summary>
    internal static string GroupedBars(string directory, string fileName, string title, string yLabel, string[] groups, string[] series, double[][] values)
    {
        var plot = new Plot();
        plot.Title(title);
        plot.YLabel(yLabel);
        // Log scale: the figures span 1,000x (2006 threads against today's async processes); the
        // bars start a decade below the smallest figure.
        double[][] logs = [.. values.Select(row => row.Select(v => Math.Log10(Math.Max(v, 1e-6))).ToArray())];
        double bottom = Math.Floor(logs.Min(row => row.Min())) - 1;
        double top = Math.Ceiling(logs.Max(row => row.Max()));
        var bars = new List<Bar>();
        for (int g = 0; g < groups.Length; g++)
        {
            for (int s = 0; s < series.Length; s++)
            {
                bars.Add(new Bar
                {
                    Position = (g * (series.Length + 1)) + s,
                    ValueBase = bottom,
                    Value = logs[g][s],
                    FillColor = plot.Add.Palette.GetColor(s),
                });
            }
        }

        plot.Add.Bars(bars);
        for (int s = 0; s < series.Length; s++)
        {
            plot.Legend.ManualItems.Add(new LegendItem { LabelText = series[s], FillColor = plot.Add.Palette.GetColor(s) });
        }

        double[] centres = [.. groups.Select((_, g) => (g * (series.Length + 1)) + ((series.Length - 1) / 2.0))];
        plot.Axes.Bottom.SetTicks(centres, groups);
        plot.Axes.Bottom.MajorTickStyle.Length = 0;
        ChartKit.LogTicks(null, plot.Axes.Left);
        // Room above the bars for the legend.
        plot.Axes.SetLimitsY(bottom, top + (0.45 * (top - bottom)));
        plot.ShowLegend(Alignment.UpperRight);
        return ChartKit.Save(plot, directory, fileName);
    }
}
