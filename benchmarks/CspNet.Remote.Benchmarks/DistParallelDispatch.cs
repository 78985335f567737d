using BenchmarkDotNet.Attributes;
using CspNet.NameServer;
using CspNet.Remote.Workers;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The cost of dispatching a process to a remote worker: <c>DistParallel.RunAsync</c> of processes
/// whose <c>Run()</c> does nothing, on a worker pool in this process (its own endpoint and node,
/// loopback). Time per process.
/// </summary>
/// <remarks>
/// <list type="bullet">
/// <item><see cref="LocalThread"/> (baseline): DistParallel with no node: one local thread per process.</item>
/// <item><see cref="OneRemote"/>: one process per run: the NameServer's ListPools, a new stream to
/// the pool, Reserve/Granted, Job, Started, Done. The code was shipped in the setup; a run ships
/// the process's fields only (the pool has the image cached).</item>
/// <item><see cref="EightRemote"/>: eight processes per run on one stream: one NameServer round trip
/// and one reservation shared by eight jobs.</item>
/// </list>
/// </remarks>
[Config(typeof(RemoteBenchmarkConfig))]
public class DistParallelDispatch
{
    private NameServerHost? _nameServer;
    private WorkerPoolHost? _pool;
    private CspNode? _client;
    private ICSPProcess[] _one = [];
    private ICSPProcess[] _eight = [];

    /// <summary>Starts a NameServer, a pool of eight workers and a client node; one run ships the code.</summary>
    [GlobalSetup]
    public async Task SetupAsync()
    {
        _nameServer = await NameServerHost.StartAsync();
        _pool = await WorkerPoolHost.StartAsync(new WorkerPoolOptions { NameServer = _nameServer.Uri, Workers = 8, Name = "bench" });
        _client = await CspNode.StartAsync(new CspNodeOptions { NameServer = _nameServer.Uri, ProgramLabel = "bench client" });
        _one = [new Empty()];
        _eight = [.. Enumerable.Range(0, 8).Select(_ => (ICSPProcess)new Empty())];
        var warm = new DistParallel(_eight, _client);
        await warm.RunAsync();
        if (warm.RanRemotely != 8)
        {
            throw new InvalidOperationException($"The setup ran {warm.RanRemotely} of 8 processes remotely; the benchmark would measure local threads.");
        }
    }

    /// <summary>Stops everything the setup started.</summary>
    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        if (_client is not null)
        {
            await _client.DisposeAsync();
        }

        if (_pool is not null)
        {
            await _pool.DisposeAsync();
        }

        if (_nameServer is not null)
        {
            await _nameServer.DisposeAsync();
        }
    }

    /// <summary>One empty process on a local thread.</summary>
    [Benchmark(Baseline = true)]
    public Task LocalThread() => new DistParallel(_one, null).RunAsync();

    /// <summary>One empty process on the remote pool.</summary>
    [Benchmark]
    public Task OneRemote() => new DistParallel(_one, _client).RunAsync();

    /// <summary>Eight empty processes on the remote pool, in one run.</summary>
    [Benchmark(OperationsPerInvoke = 8)]
    public Task EightRemote() => new DistParallel(_eight, _client).RunAsync();

    /// <summary>A process whose Run does nothing: what is measured is the dispatch.</summary>
    public sealed class Empty : ICSPProcess
    {
        /// <inheritdoc/>
        public void Run()
        {
        }
    }
}
