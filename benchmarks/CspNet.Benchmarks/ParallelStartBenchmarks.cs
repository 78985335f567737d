using BenchmarkDotNet.Attributes;

namespace CspNet.Benchmarks;

/// <summary>
/// Parallel start (CSP.NET Table 3 took 225 ms to start 400 threads; docs/PERFORMANCE.md's targets: 400
/// async processes in at most 0.2 ms, 400 thread processes on a warm pool in at most 2 ms).
/// One invocation runs a <see cref="Parallel"/> of <see cref="Processes"/> processes that do
/// nothing but count themselves, and returns when all have ended: start, run and join.
/// </summary>
/// <remarks>
/// The parallel is built once; the thread processes run on <see cref="CSPThreadPool.Default"/>,
/// whose threads are created in the warm-up and reused (a warm pool). The async processes are
/// queued to the .NET thread pool.
/// </remarks>
[MemoryDiagnoser]
public class ParallelStartBenchmarks
{
    private Parallel _async = null!;
    private Parallel _threads = null!;
    private Parallel _nested = null!;
    private int _ran;

    /// <summary>Processes per parallel.</summary>
    [Params(400)]
    public int Processes { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _async = new Parallel();
        _threads = new Parallel();
        for (int i = 0; i < Processes; i++)
        {
            _async.AddProcess(_ =>
            {
                Interlocked.Increment(ref _ran);
                return Task.CompletedTask;
            });
            _threads.AddProcess(() => Interlocked.Increment(ref _ran));
        }

        // The same count as nested pairs: Processes / 2 parallels of 2 async processes each.
        _nested = new Parallel();
        for (int i = 0; i < Processes / 2; i++)
        {
            _nested.AddProcess(new Parallel(new CountingProcess(this), new CountingProcess(this)));
        }
    }

    /// <summary>400 async processes: start, run, join.</summary>
    [Benchmark(Baseline = true)]
    public void AsyncProcesses() => _async.Run();

    /// <summary>400 thread processes on a warm <see cref="CSPThreadPool"/>: start, run, join.</summary>
    [Benchmark]
    public void ThreadProcesses() => _threads.Run();

    /// <summary>200 nested parallels of 2 async processes each (400 processes, 601 with the parallels).</summary>
    [Benchmark]
    public void NestedPairs() => _nested.Run();

    private sealed class CountingProcess(ParallelStartBenchmarks owner) : IAsyncCSPProcess
    {
        public Task RunAsync(CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref owner._ran);
            return Task.CompletedTask;
        }
    }
}
