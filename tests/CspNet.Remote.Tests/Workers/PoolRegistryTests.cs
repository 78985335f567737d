using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.NameServer;

namespace CspNet.Remote.Tests.Workers;

/// <summary>Worker pools in the NameServer's registry: one per lease, purged with it, listed by free workers.</summary>
public sealed class PoolRegistryTests : IDisposable
{
    private static readonly TimeSpan Ttl = TimeSpan.FromSeconds(10);
    private static readonly LinkEndpoint Link = new("127.0.0.1", 7001);
    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNameRegistry _registry;

    public PoolRegistryTests() => _registry = new InMemoryNameRegistry(new NameServerOptions { LeaseTtl = Ttl }, _time);

    public void Dispose() => _registry.Dispose();

    private static WorkerPoolEntry Pool(string name, int workers, int free, int port = 8001) =>
        new() { Name = name, Endpoint = new LinkEndpoint("127.0.0.1", port), Workers = workers, FreeWorkers = free, Incarnation = "forged" };

    [Fact]
    public async Task ListPoolsAsync_SeveralPools_ListsThoseWithEnoughFreeWorkersMostFreeFirst()
    {
        NameLease a = await _registry.OpenLeaseAsync(Link, "a");
        NameLease b = await _registry.OpenLeaseAsync(Link, "b");
        NameLease c = await _registry.OpenLeaseAsync(Link, "c");
        await _registry.RegisterPoolAsync(a.Id, Pool("a", 4, 1));
        await _registry.RegisterPoolAsync(b.Id, Pool("b", 4, 3));
        await _registry.RegisterPoolAsync(c.Id, Pool("c", 4, 0));

        IReadOnlyList<WorkerPoolEntry> pools = await _registry.ListPoolsAsync(1);

        Assert.Equal(["b", "a"], pools.Select(p => p.Name));
        Assert.Equal(Incarnations.Of(b.Id), pools[0].Incarnation); // taken from the lease, not the request
    }

    [Fact]
    public async Task UpdatePoolAsync_NewFreeCount_IsWhatListPoolsShows()
    {
        NameLease lease = await _registry.OpenLeaseAsync(Link, "a");
        await _registry.RegisterPoolAsync(lease.Id, Pool("a", 4, 4));

        await _registry.UpdatePoolAsync(lease.Id, 0);

        Assert.Empty(await _registry.ListPoolsAsync(1));
        Assert.Equal(0, Assert.Single(await _registry.ListPoolsAsync(0)).FreeWorkers);
    }

    [Fact]
    public async Task UpdatePoolAsync_MoreFreeThanWorkersOrNoPool_Throws()
    {
        NameLease lease = await _registry.OpenLeaseAsync(Link, "a");

        await Assert.ThrowsAsync<LeaseNotFoundException>(() => _registry.UpdatePoolAsync(lease.Id, 1));
        await _registry.RegisterPoolAsync(lease.Id, Pool("a", 4, 4));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => _registry.UpdatePoolAsync(lease.Id, 5));
    }

    [Fact]
    public async Task LeaseExpires_PoolOfADeadProgram_IsPurged()
    {
        NameLease lease = await _registry.OpenLeaseAsync(Link, "a");
        await _registry.RegisterPoolAsync(lease.Id, Pool("a", 4, 4));

        _time.Advance(Ttl + TimeSpan.FromSeconds(1));

        Assert.Empty(await _registry.ListPoolsAsync(0));
    }

    [Fact]
    public async Task RegisterPoolAsync_SameLeaseAgain_ReplacesThePool()
    {
        NameLease lease = await _registry.OpenLeaseAsync(Link, "a");
        await _registry.RegisterPoolAsync(lease.Id, Pool("a", 4, 4));

        await _registry.RegisterPoolAsync(lease.Id, Pool("a", 8, 8, port: 8002));

        WorkerPoolEntry pool = Assert.Single(await _registry.ListPoolsAsync(0));
        Assert.Equal(8, pool.Workers);
        Assert.Equal(8002, pool.Endpoint.Port);
    }

    [Theory]
    [InlineData("", 1, 0)]
    [InlineData("a", 0, 0)]
    [InlineData("a", 2, 3)]
    [InlineData("a\u0001", 2, 1)]
    public async Task RegisterPoolAsync_MalformedPool_ThrowsArgumentException(string name, int workers, int free)
    {
        NameLease lease = await _registry.OpenLeaseAsync(Link, "a");

        await Assert.ThrowsAnyAsync<ArgumentException>(() => _registry.RegisterPoolAsync(lease.Id, Pool(name, workers, free)));
    }
}
