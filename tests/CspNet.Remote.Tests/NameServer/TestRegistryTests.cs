using CspNet.NameServer;
using CspNet.NameServer.Etcd;
using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.Named;
using CspNet.Remote.Tests.Workers;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// The suite's registry switch: the shared fixtures' NameServer, and those a class starts through
/// <see cref="TestRegistryFixture"/>, are on the registry <c>CSPNET_TEST_REGISTRY</c> names.
/// </summary>
public sealed class TestRegistryTests(TestRegistryFixture registry) : IClassFixture<TestRegistryFixture>
{
    private static Type Expected => TestRegistry.OnEtcd ? typeof(EtcdNameRegistry) : typeof(InMemoryNameRegistry);

    [Fact(Timeout = 30_000)]
    public async Task TestSystem_ThisRun_ServesTheRegistryTheSwitchNames()
    {
        await using TestSystem system = await TestSystem.StartAsync();

        Assert.IsType(Expected, system.Host.Registry);
    }

    [Fact(Timeout = 30_000)]
    public async Task PoolSystem_RestartedNameServer_ServesTheRegistryTheSwitchNamesWithAnEmptyTable()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        NameLease lease = await system.Host.Registry.OpenLeaseAsync(new LinkEndpoint("127.0.0.1", 7001), "before-restart");
        await system.Host.Registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel("numbers"), returnExisting: false);

        await system.RestartNameServerAsync();

        Assert.IsType(Expected, system.Host.Registry);
        Assert.Null(await system.Host.Registry.ResolveAsync("numbers", TimeSpan.Zero));
    }

    [Fact(Timeout = 30_000)]
    public async Task TestRegistryFixture_TwoNameServers_ServeTheRegistryTheSwitchNamesWithTablesOfTheirOwn()
    {
        await using NameServerHost first = await registry.StartNameServerAsync();
        await using NameServerHost second = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        NameLease lease = await first.Registry.OpenLeaseAsync(new LinkEndpoint("127.0.0.1", 7001), "first");
        await first.Registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel("numbers"), returnExisting: false);

        Assert.IsType(Expected, first.Registry);
        Assert.IsType(Expected, second.Registry);
        Assert.Null(await second.Registry.ResolveAsync("numbers", TimeSpan.Zero));
    }
}
