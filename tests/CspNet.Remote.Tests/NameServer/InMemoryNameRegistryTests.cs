using CspNet.NameServer;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>The registry contract (<see cref="NameRegistryContractTests"/>) in memory, and what only the in-memory registry does: a manual clock expires its leases, and it counts exactly.</summary>
public sealed class InMemoryNameRegistryTests : NameRegistryContractTests
{
    private InMemoryNameRegistry InMemory => (InMemoryNameRegistry)Registry;

    protected override Task<INameRegistry> CreateRegistryAsync(TimeProvider time) =>
        Task.FromResult<INameRegistry>(new InMemoryNameRegistry(new NameServerOptions { LeaseTtl = Ttl, MaxResolveWait = TimeSpan.FromSeconds(30) }, time));

    [Fact]
    public async Task LeaseExpiry_NoRenewal_PurgesTheLeaseAndItsNames()
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");
        await Registry.RegisterAsync(lease.Id, Channel("one"), returnExisting: false);
        await Registry.RegisterAsync(lease.Id, new NameEntry { Name = "sync", Kind = NameKind.Barrier }, returnExisting: false);
        Time.Advance(Ttl - TimeSpan.FromTicks(1));
        Assert.Equal(2, InMemory.NameCount);

        Time.Advance(TimeSpan.FromTicks(1));

        // The timer purged, before any call looked.
        Assert.Equal(0, InMemory.NameCount);
        Assert.Equal(0, InMemory.LeaseCount);
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => Registry.RenewAsync(lease.Id));
    }

    [Fact]
    public async Task RenewAsync_BeforeExpiry_KeepsTheNames()
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");
        NameLease idle = await Registry.OpenLeaseAsync(HostB, "b");
        await Registry.RegisterAsync(lease.Id, Channel("alive"), returnExisting: false);
        await Registry.RegisterAsync(idle.Id, Channel("dead"), returnExisting: false);

        for (int i = 0; i < 5; i++)
        {
            Time.Advance(Ttl / 3);
            Assert.Equal(Ttl, await Registry.RenewAsync(lease.Id));
        }

        Assert.NotNull(await Registry.ResolveAsync("alive", TimeSpan.Zero));
        Assert.Null(await Registry.ResolveAsync("dead", TimeSpan.Zero));
        Assert.Equal(1, InMemory.LeaseCount);
    }

    [Fact]
    public async Task OpenLeaseAsync_AtTheLeaseLimit_ThrowsCapacityExceeded()
    {
        using var small = new InMemoryNameRegistry(new NameServerOptions { MaxLeases = 1, MaxNames = 1 }, Time);
        NameLease lease = await small.OpenLeaseAsync(HostA, "a");
        await small.RegisterAsync(lease.Id, Channel("one"), returnExisting: false);

        await Assert.ThrowsAsync<NameServerCapacityExceededException>(() => small.OpenLeaseAsync(HostB, "b"));
        await Assert.ThrowsAsync<NameServerCapacityExceededException>(() => small.RegisterAsync(lease.Id, Channel("two"), returnExisting: false));
    }

    [Fact]
    public void LinkEndpoint_IPv6Host_FormatsWithBrackets()
    {
        Assert.Equal("[::1]:7000", new LinkEndpoint("::1", 7000).ToString());
        Assert.Equal("localhost:7000", new LinkEndpoint("localhost", 7000).ToString());
    }
}
