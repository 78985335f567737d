using CspNet.NameServer;
using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.NameServer;

namespace CspNet.Remote.Tests.Workers;

/// <summary>Worker pools in the in-memory registry purged with their lease on a manual clock; the rest of the pool contract is in <see cref="NameRegistryContractTests"/>.</summary>
public sealed class PoolRegistryTests : IDisposable
{
    private static readonly TimeSpan Ttl = TimeSpan.FromSeconds(10);
    private static readonly LinkEndpoint Link = new("127.0.0.1", 7001);
    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNameRegistry _registry;

    public PoolRegistryTests() => _registry = new InMemoryNameRegistry(new NameServerOptions { LeaseTtl = Ttl }, _time);

    public void Dispose() => _registry.Dispose();

    private static WorkerPoolEntry Pool(string name, int workers, int free) => NameRegistryContractTests.Pool(name, workers, free);

    [Fact]
    public async Task LeaseExpires_PoolOfADeadProgram_IsPurged()
    {
        NameLease lease = await _registry.OpenLeaseAsync(Link, "a");
        await _registry.RegisterPoolAsync(lease.Id, Pool("a", 4, 4));

        _time.Advance(Ttl + TimeSpan.FromSeconds(1));

        Assert.Empty(await _registry.ListPoolsAsync(0));
    }
}
