using System.Globalization;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Engines;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// JVMCSP Table 3 (480,900,001 live processes in 126 GB): <see cref="Pairs"/> pairs of async
/// processes, each pair joined by two <see cref="One2OneChannel{T}"/> (A writes to B on c1, B
/// writes back on c2, <see cref="Exchanges"/> times), all in one <see cref="Parallel"/>. After the
/// first exchange every B waits at a shared gate and every A parks on its second write, so all
/// 2 x <see cref="Pairs"/> processes are alive and parked at once; then the gate opens and the
/// pairs finish.
/// </summary>
/// <remarks>
/// <para>
/// One invocation = create the channels and processes, run until all are parked, open the gate,
/// join. <c>RunStrategy.Monitoring</c>: one invocation per iteration, no pilot (a macro benchmark).
/// Extra columns: <c>ns/process</c> (Mean / processes), <c>Alloc B/process</c> (allocated bytes
/// per invocation / processes) and <c>Live B/process</c>: live managed bytes per process while
/// all are parked, measured once per parameter set in the global setup as
/// <c>GC.GetTotalMemory(true)</c> after minus before, in the benchmark process, which leaves it
/// in a small file under the temp folder for the column to read.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
[SimpleJob(RunStrategy.Monitoring, launchCount: 1, warmupCount: 2, iterationCount: 6)]
public class LiveProcessesBenchmarks
{
    /// <summary>Pairs of processes (2 processes each).</summary>
    [Params(10_000, 100_000, 1_000_000)]
    public int Pairs { get; set; }

    /// <summary>Round trips per pair; the gate sits after the first.</summary>
    [Params(2)]
    public int Exchanges { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        LiveResult result = LivePairs.Run(Pairs, Exchanges, measureMemory: true);
        string text = result.BytesPerProcess.ToString("F1", CultureInfo.InvariantCulture);
        Console.WriteLine($"// Live bytes per process while parked ({Pairs:N0} pairs): {text} "
            + $"(created: {result.CreatedBytesPerProcess:F1}, running adds: {result.RunningBytesPerProcess:F1})");
        Directory.CreateDirectory(Path.GetDirectoryName(LiveFile(Pairs, Exchanges))!);
        File.WriteAllText(LiveFile(Pairs, Exchanges), text);
    }

    /// <summary>Create, run until all parked, release, join.</summary>
    [Benchmark]
    public long CreateParkAndJoin() => LivePairs.Run(Pairs, Exchanges, measureMemory: false).Processes;

    private static string LiveFile(object pairs, object exchanges) =>
        Path.Combine(Path.GetTempPath(), "CspNet.Benchmarks", $"live-{pairs}-{exchanges}.txt");

    private sealed class Config : ManualConfig
    {
        public Config()
        {
            static double Processes(BenchmarkDotNet.Running.BenchmarkCase c) => 2 * PaperColumn.Parameter(c, nameof(Pairs));
            AddColumn(PaperColumn.MicrosecondsPer("us/process", Processes, "Mean / (2 x Pairs): microseconds per process, creation to end"));
            AddColumn(PaperColumn.AllocatedPer("Alloc B/process", Processes, "Allocated bytes per invocation / (2 x Pairs)"));
            AddColumn(new PaperColumn("Live B/process", "Live managed bytes per process while all are parked (GC.GetTotalMemory(true) delta, measured in the global setup)", (_, c) =>
            {
                string file = LiveFile(c.Parameters[nameof(Pairs)], c.Parameters[nameof(Exchanges)]);
                return File.Exists(file) ? File.ReadAllText(file) : "?";
            }));
        }
    }
}
