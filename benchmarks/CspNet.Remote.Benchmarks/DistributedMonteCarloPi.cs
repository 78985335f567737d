using BenchmarkDotNet.Attributes;
using CspNet.NameServer;
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
    /// <summary>Points thrown in all, per run (Table 4's first column, from 800 thousand to its largest, 800 million).</summary>
    [Params(800_000, 8_000_000, 80_000_000, 800_000_000)]
    public long Iterations { get; set; }

    /// <summary>Baseline: one loop over all the points.</summary>
    [Benchmark(Baseline = true)]
    public long Sequential() => MonteCarlo.CountInside(new WorkItem(Iterations, 115, RngKind.Xoshiro));

    /// <summary>One shipped worker per pool.</summary>
    [Benchmark]
    public Task<long> Distributed() => MonteCarloDistributedAsync(Iterations);

    private protected override async Task WarmUpAsync() => await Distributed();
}

/// <summary>A Monte Carlo worker shipped to a pool: throws its points and writes the count to a named channel.</summary>
/// <remarks>The loop is the sample's own (samples/MonteCarloPi/PiJob.cs, linked into this project).</remarks>
[Serializable]
internal sealed class PiWorker : ICSPProcess
{
    private readonly WorkItem _work;
    private readonly string _channel;

    /// <summary>Creates a worker for <paramref name="iterations"/> points from <paramref name="seed"/>.</summary>
    public PiWorker(long iterations, int seed, string channel)
    {
        _work = new WorkItem(iterations, seed, RngKind.Xoshiro);
        _channel = channel;
    }

    /// <inheritdoc/>
    public void Run() => Factory.GetAny2OneOut<long>(_channel).Write(MonteCarlo.CountInside(_work));
}
