using CspNet.NameServer;
using CspNet.NameServer.Etcd;
using CspNet.Remote.NameServer;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>The registry contract (<see cref="NameRegistryContractTests"/>) against a real etcd; each test on a prefix of its own.</summary>
[RequiresEtcd]
public sealed class EtcdNameRegistryContractTests(EtcdFixture etcd) : NameRegistryContractTests, IClassFixture<EtcdFixture>
{
    protected override async Task<INameRegistry> CreateRegistryAsync(TimeProvider time) =>
        EtcdNameRegistryTests.Create(await etcd.GetAsync(), EtcdNameRegistryTests.NewPrefix(), time);
}

/// <summary>What only the etcd registry does: etcd expires leases, replicas share the table, waits are watches, etcd can be down.</summary>
[RequiresEtcd]
public sealed class EtcdNameRegistryTests(EtcdFixture fixture) : IClassFixture<EtcdFixture>
{
    private static readonly LinkEndpoint Host = new("10.0.0.1", 7001);

    internal static string NewPrefix() => "/test/" + Guid.NewGuid().ToString("N") + "/";

    internal static EtcdNameRegistry Create(EtcdProcess etcd, string prefix, TimeProvider? time = null, TimeSpan? ttl = null, TimeSpan? operationTimeout = null) =>
        new(
            new EtcdNameRegistryOptions { Endpoints = etcd.ClientUrl, Prefix = prefix, OperationTimeout = operationTimeout ?? TimeSpan.FromSeconds(5) },
            new NameServerOptions { LeaseTtl = ttl ?? TimeSpan.FromSeconds(10), MaxResolveWait = TimeSpan.FromSeconds(30) },
            time);

    [RegistryFact(Timeout = 30000)]
    public async Task LeaseExpiry_NoRenewal_EtcdRemovesTheLeaseAndItsNames()
    {
        using EtcdNameRegistry registry = Create(await fixture.GetAsync(), NewPrefix(), ttl: TimeSpan.FromSeconds(1));
        NameLease lease = await registry.OpenLeaseAsync(Host, "a");
        await registry.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("short-lived"), returnExisting: false);
        await registry.RegisterPoolAsync(lease.Id, NameRegistryContractTests.Pool("pool", 2, 2));
        Assert.Equal(TimeSpan.FromSeconds(1), lease.TimeToLive);

        // Nothing renews: etcd revokes the lease after its time to live (a little more while a leader is elected).
        TimeSpan took = await WaitUntilAsync(async () => await registry.ResolveAsync("short-lived", TimeSpan.Zero) is null, TimeSpan.FromSeconds(10));

        Assert.True(took < TimeSpan.FromSeconds(10));
        Assert.Empty(await registry.ListPoolsAsync(0));
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => registry.RenewAsync(lease.Id));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RenewAsync_EveryQuarterOfTheTtl_KeepsTheNamesPastTheTtl()
    {
        // A 6 s time to live renewed every 1.5 s for 9 s, past the time to live: each renewal has
        // 4.5 s to spare, so a loaded machine (a late timer, etcd syncing to disk on each
        // renewal) does not let the lease lapse; 2 s to spare was not enough in a loaded CI run.
        using EtcdNameRegistry registry = Create(await fixture.GetAsync(), NewPrefix(), ttl: TimeSpan.FromSeconds(6));
        NameLease lease = await registry.OpenLeaseAsync(Host, "a");
        await registry.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("kept"), returnExisting: false);

        for (int i = 0; i < 6; i++)
        {
            await Task.Delay(lease.TimeToLive / 4);
            Assert.Equal(TimeSpan.FromSeconds(6), await registry.RenewAsync(lease.Id));
        }

        Assert.NotNull(await registry.ResolveAsync("kept", TimeSpan.Zero));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task TwoRegistriesOnOneEtcd_LeaseOpenedThroughOne_IsUsableThroughTheOther()
    {
        EtcdProcess etcd = await fixture.GetAsync();
        string prefix = NewPrefix();
        using EtcdNameRegistry first = Create(etcd, prefix);
        using EtcdNameRegistry second = Create(etcd, prefix);

        NameLease lease = await first.OpenLeaseAsync(Host, "producer");
        NameRegistration registered = await second.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("shared"), returnExisting: false);
        NameEntry? seenByFirst = await first.ResolveAsync("shared", TimeSpan.Zero);
        TimeSpan renewed = await second.RenewAsync(lease.Id);
        NameRegistration retried = await first.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("shared"), returnExisting: false);
        await first.CloseLeaseAsync(lease.Id);

        Assert.True(registered.Created);
        Assert.Equal(registered.Entry, seenByFirst);
        Assert.Equal(TimeSpan.FromSeconds(10), renewed);
        Assert.False(retried.Created); // the same definition under the same lease, through another replica
        Assert.Null(await second.ResolveAsync("shared", TimeSpan.Zero));
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => second.RenewAsync(lease.Id));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_WaitingOnOneReplica_IsWokenByARegistrationThroughAnother()
    {
        EtcdProcess etcd = await fixture.GetAsync();
        string prefix = NewPrefix();
        using EtcdNameRegistry waiting = Create(etcd, prefix);
        using EtcdNameRegistry registering = Create(etcd, prefix);

        // No memory is shared between the two: only etcd's watch can wake these.
        Task<NameEntry?>[] resolves = [.. Enumerable.Range(0, 20).Select(_ => waiting.ResolveAsync("later", TimeSpan.FromSeconds(20)))];
        NameLease lease = await registering.OpenLeaseAsync(Host, "producer");
        NameRegistration registration = await registering.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("later"), returnExisting: false);

        NameEntry?[] woken = await Task.WhenAll(resolves).WaitAsync(TimeSpan.FromSeconds(15));
        Assert.All(woken, entry => Assert.Equal(registration.Entry, entry));
    }

    [RegistryFact(Timeout = 60000)]
    public async Task EtcdStopped_Calls_FailUnavailableSayingWhatToCheck_AndWorkAgainWhenItIsBack()
    {
        await using EtcdProcess etcd = await EtcdProcess.StartAsync();
        using EtcdNameRegistry registry = Create(etcd, NewPrefix(), operationTimeout: TimeSpan.FromSeconds(2));
        NameLease before = await registry.OpenLeaseAsync(Host, "a");

        await etcd.StopAsync();
        var refused = await Assert.ThrowsAsync<EtcdRegistryUnavailableException>(() => registry.OpenLeaseAsync(Host, "b"));
        var waitRefused = await Assert.ThrowsAsync<EtcdRegistryUnavailableException>(() => registry.ResolveAsync("x", TimeSpan.FromSeconds(5)));

        Assert.IsAssignableFrom<IOException>(refused);
        Assert.Contains(etcd.ClientUrl, refused.Message, StringComparison.Ordinal);
        Assert.Contains("endpoint health", refused.Message, StringComparison.Ordinal);
        Assert.Contains("majority", waitRefused.Message, StringComparison.Ordinal);

        await etcd.RestartAsync();
        await WaitUntilAsync(async () =>
        {
            try
            {
                await registry.RenewAsync(before.Id);
                return true;
            }
            catch (EtcdRegistryUnavailableException)
            {
                return false;
            }
        }, TimeSpan.FromSeconds(20));
        NameLease after = await registry.OpenLeaseAsync(Host, "b");
        Assert.True((await registry.RegisterAsync(after.Id, NameRegistryContractTests.Channel("back"), returnExisting: false)).Created);
    }

    [RegistryFact(Timeout = 120000)]
    public async Task ThreeMemberCluster_OneLost_KeepsWorking_MajorityLost_FailsUnavailable_AndRecovers()
    {
        EtcdProcess[] members = await EtcdProcess.StartClusterAsync(3);
        try
        {
            using var registry = new EtcdNameRegistry(
                new EtcdNameRegistryOptions { Endpoints = string.Join(',', members.Select(m => m.ClientUrl)), Prefix = NewPrefix(), OperationTimeout = TimeSpan.FromSeconds(5) },
                new NameServerOptions { LeaseTtl = TimeSpan.FromSeconds(30) });
            NameLease lease = await registry.OpenLeaseAsync(Host, "a");
            await registry.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("before"), returnExisting: false);

            await members[0].StopAsync();
            NameRegistration oneLost = await registry.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("one-lost"), returnExisting: false);
            NameEntry? before = await registry.ResolveAsync("before", TimeSpan.Zero);
            await registry.RenewAsync(lease.Id);

            await members[1].StopAsync();
            var noQuorum = await Assert.ThrowsAsync<EtcdRegistryUnavailableException>(() => registry.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("no-quorum"), returnExisting: false));

            await members[1].RestartAsync();
            await WaitUntilAsync(async () =>
            {
                try
                {
                    return (await registry.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("back"), returnExisting: false)).Created;
                }
                catch (EtcdRegistryUnavailableException)
                {
                    return false;
                }
            }, TimeSpan.FromSeconds(30));

            Assert.True(oneLost.Created);
            Assert.NotNull(before);
            Assert.Contains("majority", noQuorum.Message, StringComparison.Ordinal);
            Assert.NotNull(await registry.ResolveAsync("one-lost", TimeSpan.Zero)); // nothing registered before the loss was lost
        }
        finally
        {
            foreach (EtcdProcess member in members)
            {
                await member.DisposeAsync();
            }
        }
    }

    [RegistryFact(Timeout = 60000)]
    public async Task NameServerService_EtcdStopped_AnswersUnavailableAndKeepsServing()
    {
        await using EtcdProcess etcd = await EtcdProcess.StartAsync();
        // The NameServer as a program composes it: AddCspNameServer, then the etcd registry in place of the in-memory one.
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.ConfigureKestrel(k => k.Listen(System.Net.IPAddress.Loopback, 0, l => l.Protocols = Microsoft.AspNetCore.Server.Kestrel.Core.HttpProtocols.Http2));
        builder.Services.AddCspNameServer();
        builder.Services.AddCspEtcdNameRegistry(o =>
        {
            o.Endpoints = etcd.ClientUrl;
            o.Prefix = NewPrefix();
            o.OperationTimeout = TimeSpan.FromSeconds(2);
        });
        await using WebApplication host = builder.Build();
        host.MapCspNameServer();
        await host.StartAsync();
        Uri address = new(host.Urls.First());
        using var channel = UserKey.Channel(address);
        var client = new Protocol.NameServer.NameServerClient(channel);
        var open = new Protocol.OpenLeaseRequest { Endpoint = new Protocol.Endpoint { Host = "127.0.0.1", Port = 7000 }, Program = "probe" };
        Assert.IsType<EtcdNameRegistry>(host.Services.GetRequiredService<INameRegistry>());

        await etcd.StopAsync();
        var refused = await Assert.ThrowsAsync<Grpc.Core.RpcException>(async () => await client.OpenLeaseAsync(open));
        await etcd.RestartAsync();
        Protocol.OpenLeaseReply? reply = null;
        await WaitUntilAsync(async () =>
        {
            try
            {
                reply = await client.OpenLeaseAsync(open);
                return true;
            }
            catch (Grpc.Core.RpcException e) when (e.StatusCode == Grpc.Core.StatusCode.Unavailable)
            {
                return false;
            }
        }, TimeSpan.FromSeconds(20));

        Assert.Equal(Grpc.Core.StatusCode.Unavailable, refused.StatusCode);
        Assert.Contains("etcdctl", refused.Status.Detail, StringComparison.Ordinal);
        Assert.Equal(10_000, reply!.TtlMs);
    }

    [RegistryFact(Timeout = 60000)]
    public async Task NameServerClient_ReplicaOnTheSameEtcdTakesOver_KeepsItsLeaseAndNames()
    {
        EtcdProcess etcd = await fixture.GetAsync();
        string prefix = NewPrefix();
        WebApplication first = await StartEtcdNameServerAsync(etcd, prefix);
        await using WebApplication replica = await StartEtcdNameServerAsync(etcd, prefix);
        Uri firstUri = new(first.Urls.First());
        Uri replicaUri = new(replica.Urls.First());
        await using var producer = new CspNet.Remote.Internal.Naming.NameServerClient(firstUri, new LinkEndpoint("127.0.0.1", 7001), "producer", new CspNet.Remote.Internal.Naming.NameServerClientOptions
        {
            Replicas = [replicaUri],
            InitialBackoff = TimeSpan.FromMilliseconds(10),
        });
        await producer.StartAsync(CancellationToken.None);
        string lease = producer.Incarnation;
        await producer.RegisterAsync(new NameEntry { Name = "numbers", Kind = NameKind.One2One, ValueType = "int32" }, returnExisting: false, CancellationToken.None);

        await first.StopAsync();
        await first.DisposeAsync();
        await producer.RenewOnceAsync(CancellationToken.None);
        await producer.RegisterAsync(new NameEntry { Name = "more", Kind = NameKind.One2One, ValueType = "int32" }, returnExisting: false, CancellationToken.None);

        Assert.Equal(replicaUri, producer.NameServer);
        Assert.Equal(lease, producer.Incarnation);
        INameRegistry registry = replica.Services.GetRequiredService<INameRegistry>();
        Assert.Equal(producer.PublicIncarnation, (await registry.ResolveAsync("numbers", TimeSpan.Zero))?.Incarnation);
        Assert.Equal(producer.PublicIncarnation, (await registry.ResolveAsync("more", TimeSpan.Zero))?.Incarnation);
    }

    [RegistryFact(Timeout = 60000)]
    public async Task NameServerRestart_OnEtcd_OwnerKeepsItsNameAndASquatterIsRefused()
    {
        EtcdProcess etcd = await fixture.GetAsync();
        string prefix = NewPrefix();
        WebApplication first = await StartEtcdNameServerAsync(etcd, prefix);
        await using var owner = new CspNet.Remote.Internal.Naming.NameServerClient(new Uri(first.Urls.First()), new LinkEndpoint("127.0.0.1", 7001), "owner", new CspNet.Remote.Internal.Naming.NameServerClientOptions { InitialBackoff = TimeSpan.FromMilliseconds(10) });
        await owner.StartAsync(CancellationToken.None);
        await owner.RegisterAsync(new NameEntry { Name = "numbers", Kind = NameKind.One2One, ValueType = "int32" }, returnExisting: false, CancellationToken.None);
        var lost = new List<string>();
        owner.NameLost += (name, _) => lost.Add(name);

        // The NameServer restarts (here: another process on the same table) and a squatter comes first.
        await first.StopAsync();
        await first.DisposeAsync();
        await using WebApplication second = await StartEtcdNameServerAsync(etcd, prefix);
        await using var squatter = new CspNet.Remote.Internal.Naming.NameServerClient(new Uri(second.Urls.First()), new LinkEndpoint("127.0.0.1", 7999), "squatter", new CspNet.Remote.Internal.Naming.NameServerClientOptions());
        await squatter.StartAsync(CancellationToken.None);
        await Assert.ThrowsAsync<NameAlreadyRegisteredException>(() => squatter.RegisterAsync(new NameEntry { Name = "numbers", Kind = NameKind.One2One, ValueType = "int32" }, returnExisting: false, CancellationToken.None));

        INameRegistry registry = second.Services.GetRequiredService<INameRegistry>();
        Assert.Equal(owner.PublicIncarnation, (await registry.ResolveAsync("numbers", TimeSpan.Zero))?.Incarnation);
        Assert.Empty(lost);
    }

    /// <summary>A NameServer as the program composes it with <c>--registry etcd</c>, on 127.0.0.1 and a free port.</summary>
    private static async Task<WebApplication> StartEtcdNameServerAsync(EtcdProcess etcd, string prefix)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.ConfigureKestrel(k => k.Listen(System.Net.IPAddress.Loopback, 0, l => l.Protocols = Microsoft.AspNetCore.Server.Kestrel.Core.HttpProtocols.Http2));
        builder.Services.AddCspNameServer();
        builder.Services.AddCspEtcdNameRegistry(o =>
        {
            o.Endpoints = etcd.ClientUrl;
            o.Prefix = prefix;
        });
        WebApplication host = builder.Build();
        host.MapCspNameServer();
        await host.StartAsync();
        return host;
    }

    /// <summary>Asks <paramref name="condition"/> until it holds (every 50 ms), failing after <paramref name="limit"/>; returns how long it took.</summary>
    private static async Task<TimeSpan> WaitUntilAsync(Func<Task<bool>> condition, TimeSpan limit)
    {
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        while (!await condition())
        {
            TimeSpan elapsed = System.Diagnostics.Stopwatch.GetElapsedTime(start);
            Assert.True(elapsed < limit, $"The condition did not hold within {limit}.");
            await Task.Delay(50);
        }

        return System.Diagnostics.Stopwatch.GetElapsedTime(start);
    }
}
