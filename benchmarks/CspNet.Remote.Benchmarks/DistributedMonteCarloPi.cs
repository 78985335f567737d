using BenchmarkDotNet.Attributes;
using CspNet.Remote.NameServer;
using CspNet.Remote.Workers;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The rig of the distributed Monte Carlo benchmark: a NameServer, two worker pools of one worker each and a
/// client node, all in this process (each with its own endpoint, node and load context), so the
/// shipped code runs on this machine's cores; and the named Any2One channel counts come back on.
/// </summary>
[Config(typeof(RemoteBenchmarkConfig))]
public abstract class PoolBenchmark
{
    /// <summary>How many pools (of one worker each).</summary>
    protected const int Pools = 2;

    private const string CountsChannel = "bench/pi/counts";

    private readonly List<WorkerPoolHost> _pools = [];
    private NameServerHost? _nameServer;
    private AltingChannelIn<long>? _counts;

    /// <summary>The program that runs DistParallel.</summary>
    private protected CspNode Client { get; private set; } = null!;

    /// <summary>Starts the NameServer, the pools and the client.</summary>
    [GlobalSetup]
    public async Task SetupAsync()
    {
        _nameServer = await NameServerHost.StartAsync();
        for (int i = 0; i < Pools; i++)
        {
            _pools.Add(await WorkerPoolHost.StartAsync(new WorkerPoolOptions { NameServer = _nameServer.Uri, Name = "bench-pool-" + i, Workers = 1 }));
        }

        Client = await CspNode.StartAsync(new CspNodeOptions { NameServer = _nameServer.Uri, ProgramLabel = "bench-client" });
        _counts = await Client.GetAny2OneInAsync<long>(CountsChannel);
        await WarmUpAsync();
    }

    /// <summary>Stops the client, the pools and the NameServer.</summary>
    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        await Client.DisposeAsync();
        foreach (WorkerPoolHost pool in _pools)
        {
            await pool.DisposeAsync();
        }

        await _nameServer!.DisposeAsync();
    }

    /// <summary>One run of each benchmark, so that the first measured one does not ship the code.</summary>
    private protected abstract Task WarmUpAsync();

    /// <summary>Monte Carlo Pi shipped to the pools, one worker each; the counts come back over the named channel.</summary>
    private protected async Task<long> MonteCarloDistributedAsync(long iterations)
    {
        var workers = new ICSPProcess[Pools];
        for (int i = 0; i < Pools; i++)
        {
            workers[i] = new PiWorker(iterations / Pools + (i < iterations % Pools ? 1 : 0), 115 + i, CountsChannel);
        }

        Task running = new DistParallel(workers, Client).RunAsync();
        long inside = 0;
        for (int i = 0; i < Pools; i++)
        {
            inside += await _counts!.ReadAsync();
        }

        await running;
        return inside;
    }
}

/// <summary>
/// The paper's Table 4: Monte Carlo Pi shipped to two worker pools against the same points thrown
/// sequentially, by number of points.
/// </summary>
public class DistributedMonteCarloPi : PoolBenchmark
{
    /// <summary>Points thrown in all, per run (Table 4's first column, within this machine's patience).</summary>
    [Params(800_000, 8_000_000, 80_000_000)]
    public long Iterations { get; set; }

    /// <summary>Baseline: one loop over all the points.</summary>
    [Benchmark(Baseline = true)]
    public long Sequential() => PiKernel.CountInside(Iterations, 115);

    /// <summary>One shipped worker per pool.</summary>
    [Benchmark]
    public Task<long> Distributed() => MonteCarloDistributedAsync(Iterations);

    private protected override async Task WarmUpAsync() => await Distributed();
}

/// <summary>A Monte Carlo worker shipped to a pool: throws its points and writes the count to a named channel.</summary>
[Serializable]
public sealed class PiWorker : ICSPProcess
{
    private readonly long _iterations;
    private readonly int _seed;
    private readonly string _channel;

    /// <summary>Creates a worker for <paramref name="iterations"/> points from <paramref name="seed"/>.</summary>
    public PiWorker(long iterations, int seed, string channel)
    {
        _iterations = iterations;
        _seed = seed;
        _channel = channel;
    }

    /// <inheritdoc/>
    public void Run() => Factory.GetAny2OneOut<long>(_channel).Write(PiKernel.CountInside(_iterations, _seed));
}

/// <summary>The points-in-the-circle loop (xoshiro256**, seeded by SplitMix64), the same on both sides.</summary>
public static class PiKernel
{
    /// <summary>Throws <paramref name="iterations"/> points; returns how many fell inside the unit circle.</summary>
    /// <remarks>
    /// Optimised from the first call: a shipped worker calls it once per run, so under tiered
    /// compilation it would run as on-stack-replaced tier-0 code while the sequential baseline,
    /// called by every benchmark invocation, runs fully optimised.
    /// </remarks>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveOptimization)]
    public static long CountInside(long iterations, int seed)
    {
        ulong s = (ulong)seed;
        ulong s0 = SplitMix(ref s), s1 = SplitMix(ref s), s2 = SplitMix(ref s), s3 = SplitMix(ref s);
        long inside = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = Next(ref s0, ref s1, ref s2, ref s3);
            double y = Next(ref s0, ref s1, ref s2, ref s3);
            if (x * x + y * y <= 1.0)
            {
                inside++;
            }
        }

        return inside;
    }

    private static ulong SplitMix(ref ulong state)
    {
        ulong z = state += 0x9E3779B97F4A7C15;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
        return z ^ (z >> 31);
    }

    private static double Next(ref ulong s0, ref ulong s1, ref ulong s2, ref ulong s3)
    {
        ulong result = ulong.RotateLeft(s1 * 5, 7) * 9;
        ulong t = s1 << 17;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = ulong.RotateLeft(s3, 45);
        return (result >> 11) * (1.0 / (1UL << 53));
    }
}
