using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// CommsTime (JVMCSP Table 2: 1.88 us per communication on one core of an AMD Opteron, 2016):
/// Prefix(0) -> Delta -> Successor -> Prefix, Delta -> Consumer; four communications per
/// iteration. Delta writes its two outputs one after the other (SeqDelta).
/// </summary>
/// <remarks>
/// One invocation runs <see cref="IterationsPerInvoke"/> iterations; <c>OperationsPerInvoke</c>
/// makes <c>Mean</c> the time per iteration, and the column <c>us/comm</c> divides it by four.
/// Each variant's <see cref="Parallel"/> is built once (thread processes reuse
/// <see cref="CSPThreadPool.Default"/> threads). Baseline: the same network over
/// System.Threading.Channels rendezvous channels with async loops.
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 10)]
public class CommsTimeBenchmarks
{
    /// <summary>CommsTime iterations per invocation.</summary>
    public const int IterationsPerInvoke = 20_000;

    private readonly CommsTime _commsTime = new() { Iterations = IterationsPerInvoke };

    /// <summary>System.Threading.Channels rendezvous channels, four async loops.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = IterationsPerInvoke)]
    public Task StcRendezvousAsync() => _commsTime.Stc.RunAsync();

    /// <summary>CspNet, four thread processes.</summary>
    [Benchmark(OperationsPerInvoke = IterationsPerInvoke)]
    public Task CspThreads() => _commsTime.Threads.RunAsync();

    /// <summary>CspNet, four async processes.</summary>
    [Benchmark(OperationsPerInvoke = IterationsPerInvoke)]
    public Task CspAsync() => _commsTime.Async.RunAsync();

    private sealed class Config : ManualConfig
    {
        public Config() => AddColumn(PaperColumn.MicrosecondsPer("us/comm", _ => CommsTime.CommunicationsPerIteration, "Mean / 4: microseconds per communication (JVMCSP Table 2 reports 1.88 us)"));
    }
}
