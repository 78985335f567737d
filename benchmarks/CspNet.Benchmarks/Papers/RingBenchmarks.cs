using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// CSP.NET Table 1: three processes A -> B -> C -> A pass integers around a ring of unbuffered
/// channels of one kind; A sends the next integer only when the previous one has come back.
/// </summary>
/// <remarks>
/// <para>
/// The paper timed 500,000 integers per run (12-18 s in 2006). Here one invocation sends
/// <see cref="IntegersPerInvoke"/> = 50,000 integers (a tenth) and
/// <c>OperationsPerInvoke</c> = 50,000, so <c>Mean</c> is the time per integer (three
/// communications). The column <c>ms/500k</c> is <c>Mean</c> x 500,000: the figure Table 1 reports.
/// </para>
/// <para>
/// Each variant's <see cref="Parallel"/> is built once; thread processes run on
/// <see cref="CSPThreadPool.Default"/> threads, reused from one invocation to the next (the
/// paper's figures are dominated by context switches, not by thread creation). Baseline: the same
/// ring over System.Threading.Channels rendezvous channels (<c>Channel.CreateBounded&lt;int&gt;(0)</c>)
/// with async loops. The baseline does not depend on <see cref="Kind"/>; it runs once per kind so
/// that every row has a ratio.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[Config(typeof(Config))]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 10)]
public class RingBenchmarks
{
    /// <summary>Integers sent around the ring per invocation.</summary>
    public const int IntegersPerInvoke = 50_000;

    private Ring _ring = null!;

    /// <summary>The channel kind of all three channels.</summary>
    [Params(ChannelKind.One2One, ChannelKind.Any2One, ChannelKind.One2Any, ChannelKind.Any2Any)]
    public ChannelKind Kind { get; set; }

    [GlobalSetup]
    public void Setup() => _ring = new Ring(Kind) { Count = IntegersPerInvoke };

    /// <summary>System.Threading.Channels rendezvous channels, three async loops.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = IntegersPerInvoke)]
    public Task StcRendezvousAsync() => _ring.Stc.RunAsync();

    /// <summary>CspNet, three thread processes (blocking Read/Write).</summary>
    [Benchmark(OperationsPerInvoke = IntegersPerInvoke)]
    public Task CspThreads() => _ring.Threads.RunAsync();

    /// <summary>CspNet, three async processes (ReadAsync/WriteAsync).</summary>
    [Benchmark(OperationsPerInvoke = IntegersPerInvoke)]
    public Task CspAsync() => _ring.Async.RunAsync();

    private sealed class Config : ManualConfig
    {
        public Config() => AddColumn(PaperColumn.MillisecondsFor("ms/500k", 500_000, "Mean x 500,000: milliseconds for the 500,000 integers of CSP.NET Table 1"));
    }
}
