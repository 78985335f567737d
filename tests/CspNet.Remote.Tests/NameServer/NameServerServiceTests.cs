using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// The NameServer's gRPC service, as programs and other clients call it, against each registry:
/// <see cref="InMemoryNameServerServiceTests"/> and <see cref="EtcdNameServerServiceTests"/>.
/// </summary>
public abstract class NameServerServiceTests
{
    /// <summary>A NameServer on 127.0.0.1 with an empty table of the registry under test.</summary>
    private protected abstract Task<NameServerTestHost> StartServerAsync();

    private static async Task<StatusCode> StatusOf(Func<Task> call)
    {
        var e = await Assert.ThrowsAsync<RpcException>(call);
        return e.StatusCode;
    }

    [RegistryFact(Timeout = 30000)]
    public async Task Register_ThenResolve_ReturnsTheEntryWithTheLeaseEndpoint()
    {
        await using var server = await StartServerAsync();
        string lease = await server.OpenLeaseAsync(port: 7123);

        var registered = await server.Client.RegisterAsync(new Proto.RegisterRequest { LeaseId = lease, Entry = NameServerTestHost.Channel32("numbers") });
        var resolved = await server.Client.ResolveAsync(new Proto.ResolveRequest { Name = "numbers" });

        Assert.True(registered.Created);
        Assert.Equal(7123, resolved.Entry.Endpoint.Port);
        Assert.Equal(CspNet.Remote.NameServer.Incarnations.Of(lease), resolved.Entry.Incarnation);
        Assert.Equal("One2One", resolved.Entry.Kind);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task Register_TakenName_AnswersAlreadyExistsSayingWhere()
    {
        await using var server = await StartServerAsync();
        string owner = await server.OpenLeaseAsync("producer (42)", 7001);
        string other = await server.OpenLeaseAsync("consumer (43)", 7002);
        await server.Client.RegisterAsync(new Proto.RegisterRequest { LeaseId = owner, Entry = NameServerTestHost.Channel32("taken") });

        var e = await Assert.ThrowsAsync<RpcException>(async () =>
            await server.Client.RegisterAsync(new Proto.RegisterRequest { LeaseId = other, Entry = NameServerTestHost.Channel32("taken") }));

        Assert.Equal(StatusCode.AlreadyExists, e.StatusCode);
        Assert.Contains("127.0.0.1:7001", e.Status.Detail, StringComparison.Ordinal);
        Assert.Contains("producer (42)", e.Status.Detail, StringComparison.Ordinal);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task Calls_MalformedOrUnknown_AnswerTheProtocolsStatusCodes()
    {
        await using var server = await StartServerAsync();
        Proto.NameServer.NameServerClient client = server.Client;
        string lease = await server.OpenLeaseAsync();

        Assert.Equal(StatusCode.InvalidArgument, await StatusOf(async () => await client.OpenLeaseAsync(new Proto.OpenLeaseRequest { Program = "no endpoint" })));
        Assert.Equal(StatusCode.InvalidArgument, await StatusOf(async () => await client.OpenLeaseAsync(new Proto.OpenLeaseRequest { Endpoint = new Proto.Endpoint { Host = "h", Port = 0 } })));
        Assert.Equal(StatusCode.InvalidArgument, await StatusOf(async () => await client.RegisterAsync(new Proto.RegisterRequest { LeaseId = lease })));
        Assert.Equal(StatusCode.InvalidArgument, await StatusOf(async () => await client.RegisterAsync(new Proto.RegisterRequest { LeaseId = lease, Entry = new Proto.NameEntry { Name = "x", Kind = "one2one", ValueType = "t" } })));
        Assert.Equal(StatusCode.InvalidArgument, await StatusOf(async () => await client.RegisterAsync(new Proto.RegisterRequest { LeaseId = lease, Entry = NameServerTestHost.Channel32(new string('x', 257)) })));
        Assert.Equal(StatusCode.InvalidArgument, await StatusOf(async () => await client.RenewAsync(new Proto.RenewRequest())));
        Assert.Equal(StatusCode.InvalidArgument, await StatusOf(async () => await client.ResolveAsync(new Proto.ResolveRequest { Name = "x", WaitMs = -1 })));
        Assert.Equal(StatusCode.NotFound, await StatusOf(async () => await client.RenewAsync(new Proto.RenewRequest { LeaseId = "unknown" })));
        Assert.Equal(StatusCode.NotFound, await StatusOf(async () => await client.CloseLeaseAsync(new Proto.CloseLeaseRequest { LeaseId = "unknown" })));
        Assert.Equal(StatusCode.NotFound, await StatusOf(async () => await client.RegisterAsync(new Proto.RegisterRequest { LeaseId = "unknown", Entry = NameServerTestHost.Channel32("x") })));
        Assert.Equal(StatusCode.NotFound, await StatusOf(async () => await client.UnregisterAsync(new Proto.UnregisterRequest { LeaseId = lease, Name = "never-registered" })));
        Assert.Equal(StatusCode.NotFound, await StatusOf(async () => await client.ResolveAsync(new Proto.ResolveRequest { Name = "unknown" })));
        Assert.Equal(StatusCode.DeadlineExceeded, await StatusOf(async () => await client.ResolveAsync(new Proto.ResolveRequest { Name = "unknown", WaitMs = 20 })));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task Resolve_NameRegisteredWhileWaiting_Answers()
    {
        await using var server = await StartServerAsync();
        string lease = await server.OpenLeaseAsync();
        var resolve = server.Client.ResolveAsync(new Proto.ResolveRequest { Name = "later", WaitMs = 20_000 }).ResponseAsync;

        await server.Client.RegisterAsync(new Proto.RegisterRequest { LeaseId = lease, Entry = NameServerTestHost.Channel32("later") });

        Assert.Equal("later", (await resolve).Entry.Name);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task StopAsync_WhileResolveWaits_EndsTheWaitWithUnavailable()
    {
        var server = await StartServerAsync();
        try
        {
            var resolve = server.Client.ResolveAsync(new Proto.ResolveRequest { Name = "never", WaitMs = 25_000 }).ResponseAsync;

            await server.Host.StopAsync();

            // Whether the call reached the server before it stopped or not, it fails fast and says so.
            // A call the service ended answers UNAVAILABLE; one whose connection the stopping server
            // closed first is reported by the gRPC client as INTERNAL ("server closed the connection").
            Assert.Contains(await StatusOf(() => resolve), new[] { StatusCode.Unavailable, StatusCode.Internal });
        }
        finally
        {
            await server.DisposeAsync();
        }
    }
}

/// <summary>The service over the in-memory registry (the default).</summary>
public sealed class InMemoryNameServerServiceTests : NameServerServiceTests
{
    private protected override Task<NameServerTestHost> StartServerAsync() => NameServerTestHost.StartAsync();
}

/// <summary>The service over a real etcd, one for the class, each test on a prefix of its own.</summary>
[RequiresEtcd]
public sealed class EtcdNameServerServiceTests(EtcdFixture etcd) : NameServerServiceTests, IClassFixture<EtcdFixture>
{
    private protected override async Task<NameServerTestHost> StartServerAsync()
    {
        NameServerTestHost server = await NameServerTestHost.StartAsync(etcd: await etcd.GetAsync());
        Assert.IsType<CspNet.NameServer.Etcd.EtcdNameRegistry>(server.Host.Registry);
        return server;
    }
}
