using CspNet.Benchmarks.Charts;
using ScottPlot;

namespace CspNet.PaperTables.Distributed;

/// <summary>
/// PNG charts of the distributed tables (option --charts DIR with --distributed), drawn from the
/// figures the text tables print, each beside the paper's where the paper gives numbers.
/// </summary>
internal static class DistributedCharts
{
    /// <summary>Ping-pong: half round trips of a 16-byte message, paper 001 beside this machine.</summary>
    internal static string WritePing(string directory, double rawTcp, double buffered, double unbuffered) =>
        Charts.GroupedBars(
            directory,
            "d-ping.png",
            "Papers 001/002: ping-pong latency, 16-byte message",
            "µs, half the round trip (log scale)",
            ["network / raw TCP", "async CSP / buffered named", "sync CSP / unbuffered named"],
            ["paper 001 (100 Mbit/s LAN)", "CspNet (loopback)"],
            [[375, rawTcp], [375, buffered], [400, unbuffered]]);

    /// <summary>Send-receive throughput by message size (log-log): raw TCP, buffered and unbuffered named channels.</summary>
    internal static string WriteSizes(string directory, IReadOnlyList<(int Size, double RawTcp, double Buffered, double Unbuffered)> rows)
    {
        var plot = new Plot();
        plot.Title("Papers 001/002: send-receive throughput by message size");
        plot.XLabel("message, bytes (log scale)");
        plot.YLabel("Mbit/s both ways (log scale)");
        ChartKit.AddLogLog(plot, "raw TCP", rows.Select(r => ((double)r.Size, r.RawTcp)), line: true);
        ChartKit.AddLogLog(plot, "buffered named", rows.Select(r => ((double)r.Size, r.Buffered)), line: true);
        ChartKit.AddLogLog(plot, "unbuffered named", rows.Select(r => ((double)r.Size, r.Unbuffered)), line: true);
        ChartKit.AddLogLog(plot, "the papers' network (100 Mbit/s)", rows.Select(r => ((double)r.Size, 100.0)), line: true);
        ChartKit.LogTicks(plot.Axes.Bottom, plot.Axes.Left);
        plot.ShowLegend(Alignment.LowerRight);
        return ChartKit.Save(plot, directory, "d-size.png");
    }

    /// <summary>Point-to-point and broadcast throughput: raw TCP beside named channels, per case and size.</summary>
    internal static string WriteBroadcast(string directory, IReadOnlyList<(string Case, double RawTcp, double Named)> rows) =>
        Charts.GroupedBars(
            directory,
            "d-bcast.png",
            "Paper 001: point-to-point and broadcast throughput",
            "Mbit/s delivered (log scale)",
            [.. rows.Select(r => r.Case)],
            ["raw TCP", "named"],
            [.. rows.Select(r => new[] { r.RawTcp, r.Named })]);

    /// <summary>Monte Carlo pi: time by packet size (log-log), the farms beside the optimal and sub-optimal bounds and the paper's.</summary>
    internal static string WritePi(string directory, IReadOnlyList<(long PerPacket, double Optimal, double SubOptimal, double RequestRespond, double ScatterGather, double PaperOptimal, double PaperSubOptimal)> rows)
    {
        var plot = new Plot();
        plot.Title("Paper 001: Monte Carlo pi, request-respond vs scatter-gather");
        plot.XLabel("iterations per packet (log scale)");
        plot.YLabel("ms (log scale)");
        ChartKit.AddLogLog(plot, "optimal (this machine)", rows.Select(r => ((double)r.PerPacket, r.Optimal)), line: true);
        ChartKit.AddLogLog(plot, "sub-optimal (this machine)", rows.Select(r => ((double)r.PerPacket, r.SubOptimal)), line: true);
        ChartKit.AddLogLog(plot, "request-respond", rows.Select(r => ((double)r.PerPacket, r.RequestRespond)), line: true);
        ChartKit.AddLogLog(plot, "scatter-gather", rows.Select(r => ((double)r.PerPacket, r.ScatterGather)), line: true);
        ChartKit.AddLogLog(plot, "paper optimal (1e9 over 8)", rows.Where(r => !double.IsNaN(r.PaperOptimal)).Select(r => ((double)r.PerPacket, r.PaperOptimal)), line: false);
        ChartKit.AddLogLog(plot, "paper sub-optimal", rows.Where(r => !double.IsNaN(r.PaperSubOptimal)).Select(r => ((double)r.PerPacket, r.PaperSubOptimal)), line: false);
        ChartKit.LogTicks(plot.Axes.Bottom, plot.Axes.Left);
        plot.ShowLegend(Alignment.UpperRight);
        return ChartKit.Save(plot, directory, "d-pi.png");
    }

    /// <summary>Mandelbrot: data points per second by scale, this machine beside paper 002.</summary>
    internal static string WriteMandelbrot(string directory, IReadOnlyList<(int Scale, double DataPointsPerSecond, double PaperDataPointsPerSecond)> rows) =>
        Charts.GroupedBars(
            directory,
            "d-mandel.png",
            "Paper 002: Mandelbrot farm throughput",
            "data points per second (log scale)",
            [.. rows.Select(r => "scale " + r.Scale.ToString(System.Globalization.CultureInfo.InvariantCulture))],
            ["paper 002 (100 Mbit/s, Core Duo workers)", "CspNet (this machine)"],
            [.. rows.Select(r => new[] { r.PaperDataPointsPerSecond, r.DataPointsPerSecond })]);

    /// <summary>Token ring: messages per second by the number of programs.</summary>
    internal static string WriteRing(string directory, IReadOnlyList<(int Programs, double MessagesPerSecond)> rows) =>
        Charts.GroupedBars(
            directory,
            "d-ring.png",
            "Paper 003: token ring over N programs",
            "messages per second (log scale)",
            [.. rows.Select(r => r.Programs.ToString(System.Globalization.CultureInfo.InvariantCulture) + " programs")],
            ["CspNet (this machine)"],
            [.. rows.Select(r => new[] { r.MessagesPerSecond })]);
}
