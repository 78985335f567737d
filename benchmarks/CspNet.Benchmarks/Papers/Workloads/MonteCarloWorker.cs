namespace CspNet.Benchmarks.Papers;

/// <summary>
/// One Monte Carlo Pi worker (CSP.NET listing 8): <see cref="Iterations"/> random points with its
/// own seeded <see cref="Random"/>. Usable as a thread process and as an async process (the async
/// form computes without awaiting: Parallel starts it on the .NET thread pool).
/// </summary>
internal sealed class MonteCarloWorker(long iterations, int seed) : ICSPProcess, IAsyncCSPProcess
{
    internal long Iterations { get; set; } = iterations;

    internal long Hits { get; private set; }

    public void Run() => Hits = MonteCarlo.CountHits(Iterations, seed);

    public Task RunAsync(CancellationToken cancellationToken)
    {
        Hits = MonteCarlo.CountHits(Iterations, seed);
        return Task.CompletedTask;
    }
}
