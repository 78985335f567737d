using BenchmarkDotNet.Attributes;
using CspNet.NameServer;
using CspNet.NameServer.Etcd;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The NameServer's table itself, without gRPC in front: one Register plus Unregister, and one
/// Resolve of a registered name, on the in-memory registry (baseline) and on the etcd registry.
/// </summary>
/// <remarks>
/// The etcd cases need a running etcd: its client URL in the environment variable
/// <c>CSPNET_BENCH_ETCD</c> (e.g. <c>http://127.0.0.1:2379</c>, a throw-away member: the
/// benchmark writes under <c>/cspnet-bench/</c>). Register is etcd's lease read plus one
/// transaction (two round trips through Raft's leader), Resolve one linearizable read.
/// </remarks>
[Config(typeof(RemoteBenchmarkConfig))]
public class RegistryLatency
{
    private INameRegistry? _registry;
    private string _lease = "";
    private static readonly NameEntry Entry = new() { Name = "bench-register", Kind = NameKind.One2One, ValueType = "int32" };

    /// <summary>Which registry: <c>memory</c> or <c>etcd</c>.</summary>
    [Params("memory", "etcd")]
    public string Registry { get; set; } = "memory";

    [GlobalSetup]
    public void Setup()
    {
        _registry = Registry == "etcd"
            ? new EtcdNameRegistry(new EtcdNameRegistryOptions
            {
                Endpoints = Environment.GetEnvironmentVariable("CSPNET_BENCH_ETCD")
                    ?? throw new InvalidOperationException("Set CSPNET_BENCH_ETCD to a throw-away etcd's client URL, e.g. http://127.0.0.1:2379."),
                Prefix = "/cspnet-bench/" + Guid.NewGuid().ToString("N") + "/",
            })
            : new InMemoryNameRegistry();
        _lease = _registry.OpenLeaseAsync(new LinkEndpoint("127.0.0.1", 7000), "bench").GetAwaiter().GetResult().Id;
        _registry.RegisterAsync(_lease, Entry with { Name = "bench-resolve" }, returnExisting: false).GetAwaiter().GetResult();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        if (_registry is not null)
        {
            _registry.CloseLeaseAsync(_lease).GetAwaiter().GetResult();
            (_registry as IDisposable)?.Dispose();
        }
    }

    /// <summary>Registers a name and removes it again.</summary>
    [Benchmark]
    public async Task RegisterUnregister()
    {
        await _registry!.RegisterAsync(_lease, Entry, returnExisting: false);
        await _registry.UnregisterAsync(_lease, Entry.Name);
    }

    /// <summary>Resolves a registered name without waiting.</summary>
    [Benchmark]
    public Task<NameEntry?> Resolve() => _registry!.ResolveAsync("bench-resolve", TimeSpan.Zero);
}
