using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Exporters.Json;
using BenchmarkDotNet.Jobs;
using Perfolizer.Horology;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The job, diagnoser and columns of every benchmark here, sized for a slow 2-core machine.
/// </summary>
/// <remarks>
/// <para>
/// One launch, at least 5 warm-up iterations of at least 750 ms (at least 3.75 s of warm-up: HTTP/2
/// windows, Kestrel's and the client's pools and the JIT's tiering need it before gRPC settles),
/// then 10 measured iterations. The Median column is added next to Mean; read the median, as one
/// slow iteration on a shared machine moves the mean.
/// </para>
/// <para>
/// The job is marked as the default job: a job given on the command line (<c>--job dry</c>,
/// <c>--job short</c>) replaces it instead of running next to it.
/// </para>
/// </remarks>
public sealed class RemoteBenchmarkConfig : ManualConfig
{
    /// <summary>Creates the configuration.</summary>
    public RemoteBenchmarkConfig()
    {
        AddJob(Job.Default
            .WithLaunchCount(1)
            .WithWarmupCount(5)
            .WithIterationTime(TimeInterval.FromMilliseconds(750))
            .WithIterationCount(10)
            .WithId("Remote")
            .AsDefault());
        AddDiagnoser(MemoryDiagnoser.Default);
        AddColumn(StatisticColumn.Median);
        // The reports the charts command reads (Charts/BenchmarkReports.cs), beside the default CSV, HTML and Markdown.
        AddExporter(JsonExporter.Brief);
    }
}
