using System.Diagnostics;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// <c>probe METHOD SIZE [SECONDS]</c>: one NamedWriteLatency case in this process, without
/// BenchmarkDotNet, for measures the machine's load moves less than wall time: process CPU time
/// (all threads: sender, receiver, Kestrel, GC) and ThreadPool work items per write, beside the
/// median and fastest wall time per write of 200 ms samples. 3 s of warm-up first. METHOD
/// <c>NamedStream</c>: NamedWrite on a buffered channel (the stream's credited writes).
/// </summary>
internal static class Probe
{
    internal const string Name = "probe";

    /// <summary>NamedWrite on a buffered channel: the credited writes of a stream.</summary>
    private const string NamedStream = "NamedStream";

    internal static async Task<int> RunAsync(string method, int size, double seconds)
    {
        var bench = new NamedWriteLatency { Size = size };
        Func<Task> write = method switch
        {
            nameof(NamedWriteLatency.NamedWrite) or NamedStream => bench.NamedWrite,
            nameof(NamedWriteLatency.RawGrpcStream) => bench.RawGrpcStream,
            nameof(NamedWriteLatency.RawGrpcPull) => bench.RawGrpcPull,
            nameof(NamedWriteLatency.RawTcpSocket) => bench.RawTcpSocket,
            _ => throw new ArgumentException($"Unknown method '{method}'.", nameof(method)),
        };
        await (method switch
        {
            nameof(NamedWriteLatency.NamedWrite) => bench.SetupNamedAsync(),
            NamedStream => bench.SetupNamedStreamAsync(),
            nameof(NamedWriteLatency.RawGrpcPull) => bench.SetupPullAsync(),
            nameof(NamedWriteLatency.RawTcpSocket) => bench.SetupTcpAsync(),
            _ => bench.SetupGrpcAsync(),
        });
        try
        {
            await RunForAsync(write, TimeSpan.FromSeconds(3), samples: null);
            var samples = new List<double>();
            using var process = Process.GetCurrentProcess();
            TimeSpan cpu = process.TotalProcessorTime;
            long items = ThreadPool.CompletedWorkItemCount;
            long allocated = GC.GetTotalAllocatedBytes();
            TimeSpan paused = GC.GetTotalPauseDuration();
            int gen0 = GC.CollectionCount(0), gen2 = GC.CollectionCount(2);
            KernelCounters kernel = KernelCounters.Read();
            long writes = await RunForAsync(write, TimeSpan.FromSeconds(seconds), samples);
            process.Refresh();
            KernelCounters kernelUsed = KernelCounters.Read() - kernel;
            double cpuPerWrite = (process.TotalProcessorTime - cpu).TotalMicroseconds / writes;
            double itemsPerWrite = (double)(ThreadPool.CompletedWorkItemCount - items) / writes;
            double kbPerWrite = (GC.GetTotalAllocatedBytes() - allocated) / 1024.0 / writes;
            double pausePerWrite = (GC.GetTotalPauseDuration() - paused).TotalMicroseconds / writes;
            double gen0PerK = (GC.CollectionCount(0) - gen0) * 1000.0 / writes, gen2PerK = (GC.CollectionCount(2) - gen2) * 1000.0 / writes;
            samples.Sort();
            Console.WriteLine(
                $"{method} {size} B: median {samples[samples.Count / 2]:F1} us, fastest {samples[0]:F1} us per write; " +
                $"CPU {cpuPerWrite:F1} us, {itemsPerWrite:F2} work items per write; {kbPerWrite:F1} KB allocated, GC pause {pausePerWrite:F1} us per write, {gen0PerK:F0} GCs ({gen2PerK:F0} gen2) per 1000 writes; {writes} writes; load {File.ReadAllText("/proc/loadavg").Trim()}");
            Console.WriteLine($"  {kernelUsed.Describe(writes)}; GC: {GcSettings()}");
            return 0;
        }
        finally
        {
            await bench.CleanupAsync();
        }
    }

    private static readonly string[] GcKeys = ["LOHThreshold", "GCRegionSize", "GCGen0MaxBudget", "RetainVM", "ServerGC", "ConcurrentGC"];

    /// <summary>The GC settings a large value's cost depends on, as the runtime took them (environment or runtimeconfig).</summary>
    private static string GcSettings()
    {
        IReadOnlyDictionary<string, object> gc = GC.GetConfigurationVariables();
        return string.Join(", ", GcKeys.Select(key => $"{key} {(gc.TryGetValue(key, out object? value) ? value : "?")}"));
    }

    /// <summary>Runs invocations (of <see cref="NamedWriteLatency.Writes"/> writes each) for <paramref name="time"/>; adds µs per write of each 200 ms sample.</summary>
    private static async Task<long> RunForAsync(Func<Task> write, TimeSpan time, List<double>? samples)
    {
        long writes = 0;
        var total = Stopwatch.StartNew();
        while (total.Elapsed < time)
        {
            var sample = Stopwatch.StartNew();
            int invocations = 0;
            do
            {
                await write();
                invocations++;
            }
            while (sample.ElapsedMilliseconds < 200);
            writes += invocations * NamedWriteLatency.Writes;
            samples?.Add(sample.Elapsed.TotalMicroseconds / (invocations * NamedWriteLatency.Writes));
        }

        return writes;
    }
}
