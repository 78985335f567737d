using System.Globalization;
using ScottPlot;

namespace CspNet.Benchmarks.Charts;

/// <summary>
/// What the benchmark programs' PNG charts share: their size, log-log series, log-10 axes labelled
/// with the values themselves, and saving. Linked into each program that draws charts by
/// <c>Charts.props</c> beside this file, so every chart of the repository looks alike.
/// </summary>
/// <remarks>
/// ScottPlot 5 has no logarithmic axis: a log-scale chart plots log10 of each value and labels the
/// ticks with the values (<see cref="LogTicks"/>).
/// </remarks>
internal static class ChartKit
{
    /// <summary>Width of every chart, in pixels.</summary>
    internal const int Width = 640;

    /// <summary>Height of every chart, in pixels.</summary>
    internal const int Height = 400;

    /// <summary>
    /// Adds a series at log10 of each coordinate: a line with markers, or markers only when
    /// <paramref name="line"/> is false; points with a coordinate of 0 or less cannot be drawn on a
    /// log scale and are left out.
    /// </summary>
    internal static ScottPlot.Plottables.Scatter AddLogLog(Plot plot, string legend, IEnumerable<(double X, double Y)> points, bool line, Color? color = null)
    {
        (double X, double Y)[] drawable = [.. points.Where(p => p.X > 0 && p.Y > 0)];
        var series = plot.Add.Scatter(
            drawable.Select(p => Math.Log10(p.X)).ToArray(),
            drawable.Select(p => Math.Log10(p.Y)).ToArray(),
            color);
        series.LegendText = legend;
        series.MarkerSize = 8;
        if (!line)
        {
            series.LineWidth = 0;
            series.MarkerSize = 10;
        }

        return series;
    }

    /// <summary>Labels log10 axes with the values themselves (0.01, 1, 100...), one tick per decade.</summary>
    internal static void LogTicks(IXAxis? x, IYAxis? y)
    {
        static string Label(double exponent) =>
            Math.Pow(10, exponent).ToString(exponent >= 0 ? "N0" : "0.######", CultureInfo.InvariantCulture);
        if (x is not null)
        {
            x.TickGenerator = new ScottPlot.TickGenerators.NumericAutomatic { LabelFormatter = Label, IntegerTicksOnly = true };
        }

        if (y is not null)
        {
            y.TickGenerator = new ScottPlot.TickGenerators.NumericAutomatic { LabelFormatter = Label, IntegerTicksOnly = true };
        }
    }

    /// <summary>Saves <paramref name="plot"/> as <paramref name="fileName"/> in <paramref name="directory"/> (created if missing); returns the path.</summary>
    internal static string Save(Plot plot, string directory, string fileName)
    {
        Directory.CreateDirectory(directory);
        string path = Path.Combine(directory, fileName);
        plot.SavePng(path, Width, Height);
        return path;
    }
}
