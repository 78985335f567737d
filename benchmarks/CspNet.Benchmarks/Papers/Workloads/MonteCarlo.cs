namespace CspNet.Benchmarks.Papers;

/// <summary>
/// CSP.NET section 4.2 (Tables 2 and 3): Monte Carlo Pi, sequential and split over processes.
/// </summary>
/// <remarks>
/// Both versions draw from a seeded <see cref="Random"/> (seed 115, and 115 + 10 i for worker i, as
/// in listing 8). On .NET Core a seeded Random uses the legacy .NET Framework algorithm, while an
/// unseeded one uses xoshiro256** (several times faster), so seeding both keeps the sequential and
/// the parallel version on the same generator, as they were in 2006.
/// </remarks>
internal sealed class MonteCarlo
{
    /// <summary>Stack size of the thread-process pool: the paper used "around 200 kilobytes" to fit 600 threads.</summary>
    internal const int StackSize = 256 * 1024;

    private readonly MonteCarloWorker[] _workers;

    /// <param name="processes">Number of workers.</param>
    /// <param name="totalIterations">Total iterations, split evenly (the remainder goes to the first workers).</param>
    /// <param name="pool">Pool for the thread processes.</param>
    internal MonteCarlo(int processes, long totalIterations, CSPThreadPool pool)
    {
        _workers = new MonteCarloWorker[processes];
        Threads = new Parallel { ThreadPool = pool };
        Async = new Parallel();
        for (int i = 0; i < processes; i++)
        {
            _workers[i] = new MonteCarloWorker(0, 115 + (i * 10));
            Threads.AddProcess((ICSPProcess)_workers[i]);
            Async.AddProcess((IAsyncCSPProcess)_workers[i]);
        }

        TotalIterations = totalIterations;
    }

    internal int Processes => _workers.Length;

    /// <summary>Total iterations of a run, split over the workers.</summary>
    internal long TotalIterations
    {
        get;
        set
        {
            field = value;
            long each = value / _workers.Length;
            long remainder = value % _workers.Length;
            for (int i = 0; i < _workers.Length; i++)
            {
                _workers[i].Iterations = each + (i < remainder ? 1 : 0);
            }
        }
    }

    /// <summary>The workers as thread processes on the pool given to the constructor (or set on it later).</summary>
    internal Parallel Threads { get; }

    /// <summary>The workers as async processes.</summary>
    internal Parallel Async { get; }

    /// <summary>Runs <see cref="Threads"/> and returns the estimate of pi.</summary>
    internal double RunThreads()
    {
        Threads.Run();
        return Estimate();
    }

    /// <summary>Runs <see cref="Threads"/> on a new pool of <see cref="StackSize"/> threads (every process gets a newly created thread), then releases it.</summary>
    internal double RunThreadsOnFreshPool()
    {
        CSPThreadPool previous = Threads.ThreadPool;
        var fresh = new CSPThreadPool(StackSize);
        Threads.ThreadPool = fresh;
        try
        {
            Threads.Run();
        }
        finally
        {
            Threads.ThreadPool = previous;
            fresh.Release();
        }

        return Estimate();
    }

    /// <summary>Runs <see cref="Async"/> and returns the estimate of pi.</summary>
    internal double RunAsyncProcesses()
    {
        Async.Run();
        return Estimate();
    }

    /// <summary>Listing 7: the sequential version.</summary>
    internal static double Sequential(long iterations) => 4.0 * CountHits(iterations, 115) / iterations;

    /// <remarks>
    /// Compiled straight to optimised code, and never inlined, so that the sequential version and
    /// every worker run the same machine code whatever the tiering state. On .NET 10.0 the
    /// tier-1 code that dynamic PGO produces for this loop runs about 1.9 times slower than the
    /// fully optimised code without PGO (about 16 instead of 8.5 ns per iteration here): with
    /// tiering, a method called 30 times (a run with many workers) would switch to the slow code
    /// while a sequential caller that inlined it would not, which skews every ratio.
    /// </remarks>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveOptimization | System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    internal static long CountHits(long iterations, int seed)
    {
        var random = new Random(seed);
        long hits = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = (random.NextDouble() * 2.0) - 1.0;
            double y = (random.NextDouble() * 2.0) - 1.0;
            if ((x * x) + (y * y) < 1)
            {
                hits++;
            }
        }

        return hits;
    }

    private double Estimate()
    {
        long hits = 0;
        foreach (MonteCarloWorker worker in _workers)
        {
            hits += worker.Hits;
        }

        return 4.0 * hits / TotalIterations;
    }
}
