using BenchmarkDotNet.Attributes;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// CSP.NET Table 2: Monte Carlo Pi with a fixed total number of iterations split over 1 to 600
/// processes, against the sequential version (listings 7 and 8).
/// </summary>
/// <remarks>
/// <para>
/// The paper used 1,200,000,000 iterations (about 110 s on one 2 GHz Pentium 4M core). Here the
/// total is <see cref="TotalIterations"/> = 12,000,000, the paper's divided by 100. The paper ran
/// on one core, so its question was the overhead of many threads; on a multi-core machine the
/// parallel rows also gain the extra cores.
/// </para>
/// <para>
/// Thread processes run on a <see cref="CSPThreadPool"/> with 256 KiB stacks (the paper used about
/// 200 KB to fit 600 threads), kept warm between invocations: this measures running the work
/// over N threads, not creating them (see <see cref="MonteCarloIterationsBenchmarks"/> for that).
/// Every worker and the sequential version use a seeded <see cref="Random"/> (the same generator).
/// </para>
/// </remarks>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 8)]
public class MonteCarloFixedWorkBenchmarks
{
    /// <summary>Total iterations of every run: the paper's 1.2e9 / 100.</summary>
    public const long TotalIterations = 12_000_000;

    private readonly CSPThreadPool _pool = new(MonteCarlo.StackSize);
    private MonteCarlo _monteCarlo = null!;

    /// <summary>Number of worker processes.</summary>
    [Params(1, 50, 100, 200, 300, 400, 600)]
    public int Processes { get; set; }

    [GlobalSetup]
    public void Setup() => _monteCarlo = new MonteCarlo(Processes, TotalIterations, _pool);

    [GlobalCleanup]
    public void Cleanup() => _pool.Release();

    /// <summary>Listing 7: one loop on the calling thread.</summary>
    [Benchmark(Baseline = true)]
    public double Sequential() => MonteCarlo.Sequential(TotalIterations);

    /// <summary>Listing 8: <see cref="Processes"/> thread processes.</summary>
    [Benchmark]
    public double CspThreads() => _monteCarlo.RunThreads();

    /// <summary><see cref="Processes"/> async processes (computing without awaiting, on the .NET thread pool).</summary>
    [Benchmark]
    public double CspAsync() => _monteCarlo.RunAsyncProcesses();
}

/// <summary>
/// CSP.NET Table 3: 400 processes against the sequential version at total iteration counts from
/// 400 (one iteration per process) upwards: at the low end this is the cost of starting and
/// joining a <see cref="Parallel"/> of 400 processes.
/// </summary>
/// <remarks>
/// <para>
/// Paper: 225 ms for 400 threads at 400 to 40,000 iterations (.NET 2.0 created 400 threads per run),
/// 1 ms sequentially. The paper's counts are used unchanged up to 4,000,000; its 40,000,000 and
/// 400,000,000 rows are left out here (pure computation, covered by
/// <see cref="MonteCarloFixedWorkBenchmarks"/>).
/// </para>
/// <para>
/// Three parallel variants: <see cref="CspThreadsFreshPool"/> gives the run a new
/// <see cref="CSPThreadPool"/> (256 KiB stacks), so all 400 threads are created, as in 2006;
/// <see cref="CspThreadsWarmPool"/> reuses the idle threads of a pool kept between invocations
/// (the point of CSP.NET's thread pool, section 3.4); <see cref="CspAsync"/> runs 400 async processes.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 10)]
public class MonteCarloIterationsBenchmarks
{
    /// <summary>Processes of every parallel run, as in the paper.</summary>
    public const int Processes = 400;

    private readonly CSPThreadPool _pool = new(MonteCarlo.StackSize);
    private MonteCarlo _monteCarlo = null!;

    /// <summary>Total iterations, split over the 400 processes.</summary>
    [Params(400, 4_000, 40_000, 400_000, 4_000_000)]
    public long Iterations { get; set; }

    [GlobalSetup]
    public void Setup() => _monteCarlo = new MonteCarlo(Processes, Iterations, _pool);

    [GlobalCleanup]
    public void Cleanup() => _pool.Release();

    /// <summary>Listing 7.</summary>
    [Benchmark(Baseline = true)]
    public double Sequential() => MonteCarlo.Sequential(Iterations);

    /// <summary>400 thread processes on 400 newly created threads (a new pool per invocation, released afterwards).</summary>
    [Benchmark]
    public double CspThreadsFreshPool() => _monteCarlo.RunThreadsOnFreshPool();

    /// <summary>400 thread processes on the idle threads of a pool kept between invocations.</summary>
    [Benchmark]
    public double CspThreadsWarmPool() => _monteCarlo.RunThreads();

    /// <summary>400 async processes.</summary>
    [Benchmark]
    public double CspAsync() => _monteCarlo.RunAsyncProcesses();
}
