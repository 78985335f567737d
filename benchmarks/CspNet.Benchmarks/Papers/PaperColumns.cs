using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// A summary column computed from a benchmark's report: the papers' units (ms per 500,000
/// integers, bytes per process...) next to BenchmarkDotNet's per-operation figures.
/// </summary>
internal sealed class PaperColumn(string name, string legend, Func<Summary, BenchmarkCase, string> value) : IColumn
{
    public string Id => $"{nameof(PaperColumn)}.{name}";

    public string ColumnName => name;

    public bool AlwaysShow => true;

    public ColumnCategory Category => ColumnCategory.Custom;

    public int PriorityInCategory => 0;

    public bool IsNumeric => true;

    public UnitType UnitType => UnitType.Dimensionless;

    public string Legend => legend;

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => value(summary, benchmarkCase);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => value(summary, benchmarkCase);

    public bool IsAvailable(Summary summary) => true;

    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    /// <summary>Mean time per operation (ns) times <paramref name="operations"/>, in milliseconds.</summary>
    internal static PaperColumn MillisecondsFor(string name, long operations, string legend) =>
        new(name, legend, (summary, benchmarkCase) =>
            summary[benchmarkCase]?.ResultStatistics is { } stats
                ? (stats.Mean * operations / 1e6).ToString("N0", CultureInfo.InvariantCulture)
                : "-");

    /// <summary>Mean time per operation (ns) divided by <paramref name="divisor"/>(parameters), in microseconds.</summary>
    internal static PaperColumn MicrosecondsPer(string name, Func<BenchmarkCase, double> divisor, string legend) =>
        new(name, legend, (summary, benchmarkCase) =>
            summary[benchmarkCase]?.ResultStatistics is { } stats
                ? (stats.Mean / divisor(benchmarkCase) / 1e3).ToString("N3", CultureInfo.InvariantCulture)
                : "-");

    /// <summary>Allocated bytes per operation divided by <paramref name="divisor"/>(parameters).</summary>
    internal static PaperColumn AllocatedPer(string name, Func<BenchmarkCase, double> divisor, string legend) =>
        new(name, legend, (summary, benchmarkCase) =>
            summary[benchmarkCase]?.GcStats.GetBytesAllocatedPerOperation(benchmarkCase) is { } bytes
                ? (bytes / divisor(benchmarkCase)).ToString("N0", CultureInfo.InvariantCulture)
                : "-");

    /// <summary>The value of parameter <paramref name="name"/> as a number.</summary>
    internal static double Parameter(BenchmarkCase benchmarkCase, string name) =>
        Convert.ToDouble(benchmarkCase.Parameters[name], CultureInfo.InvariantCulture);
}
