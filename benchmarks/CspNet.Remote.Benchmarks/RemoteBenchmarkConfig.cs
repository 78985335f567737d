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
/// GC settings (<see cref="LargeValueGcOn"/>, the <c>--gc</c> option of Program.cs): by default the job runs
/// every method, baselines and named channel alike, with the settings docs/DISTRIBUTED.md advises
/// for programs that move large values (<see cref="LargeValueGc"/>), so that the raw TCP baseline
/// measures the network and not fresh large-object-heap pages; <c>--gc default</c> runs the
/// runtime's defaults (job <c>RemoteDefaultGc</c>).
/// </para>
/// <para>
/// The job is marked as the default job: a job given on the command line (<c>--job dry</c>,
/// <c>--job short</c>) replaces it instead of running next to it.
/// </para>
/// </remarks>
public sealed class RemoteBenchmarkConfig : ManualConfig
{
    /// <summary>
    /// The GC settings for programs that move values of a megabyte or more, as environment
    /// variables (the runtimeconfig names are in docs/DISTRIBUTED.md): regions of 32 MiB instead
    /// of 4 MiB, so that objects up to 16 MiB may live in the small object heap; a large-object
    /// threshold of 16 MiB, so that 1 MB and 4 MB arrays are allocated in gen 0 and die there
    /// instead of on the large object heap, whose freed pages a gen 2 collection gives back to the
    /// OS (each new array then faults in fresh pages); and a gen 0 budget of 64 MiB instead of this
    /// machine's 6 MiB, so that a 4 MB value does not set off a collection every other value.
    /// </summary>
    public static IReadOnlyList<(string Name, string Value)> LargeValueGc { get; } =
    [
        ("DOTNET_GCRegionSize", "0x2000000"),
        ("DOTNET_GCLOHThreshold", "0x1000000"),
        ("DOTNET_GCGen0MaxBudget", "0x4000000"),
    ];

    /// <summary>Whether the job runs with <see cref="LargeValueGc"/> (true, the default) or with the runtime's own GC settings (false: <c>--gc default</c>).</summary>
    public static bool LargeValueGcOn { get; set; } = true;

    /// <summary>Creates the configuration.</summary>
    public RemoteBenchmarkConfig()
    {
        Job job = Job.Default
            .WithLaunchCount(1)
            .WithWarmupCount(5)
            .WithIterationTime(TimeInterval.FromMilliseconds(750))
            .WithIterationCount(10);
        AddJob((LargeValueGcOn
            ? job.WithEnvironmentVariables([.. LargeValueGc.Select(v => new EnvironmentVariable(v.Name, v.Value))]).WithId("Remote")
            : job.WithId("RemoteDefaultGc")).AsDefault());
        AddDiagnoser(MemoryDiagnoser.Default);
        AddColumn(StatisticColumn.Median);
        // The reports the charts command reads (Charts/BenchmarkReports.cs), beside the default CSV, HTML and Markdown.
        AddExporter(JsonExporter.Brief);
    }
}
