using CspNet.NameServer;
using CspNet.NameServer.Etcd;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.NameServer;

namespace CspNet.Remote.Tests.Homes;

/// <summary>
/// What every registry does when a home hands its name to another program
/// (<see cref="INameRegistry.MoveAsync"/>): one step, the definition kept, the name owned by the
/// new program's lease from then on; refused, leaving the name where it was, to anyone else.
/// </summary>
public abstract class NameMoveContractTests : IAsyncLifetime
{
    private static readonly LinkEndpoint HostA = new("10.0.0.1", 7001);
    private static readonly LinkEndpoint HostB = new("hostb.example", 7002);
    private static readonly NameEntry Jobs = new() { Name = "jobs", Kind = NameKind.Any2Any, ValueType = "int32", BufferCapacity = 8 };

    private INameRegistry? _registry;

    protected INameRegistry Registry => _registry ?? throw new InvalidOperationException("InitializeAsync has not run.");

    /// <summary>An empty registry with a lease time to live of 10 s.</summary>
    protected abstract Task<INameRegistry> CreateRegistryAsync();

    public async Task InitializeAsync() => _registry = await CreateRegistryAsync();

    public Task DisposeAsync()
    {
        (_registry as IDisposable)?.Dispose();
        return Task.CompletedTask;
    }

    [RegistryFact(Timeout = 30000)]
    public async Task MoveAsync_NameOfTheLease_ResolvesAtTheOtherProgramWithItsDefinition()
    {
        NameLease from = await Registry.OpenLeaseAsync(HostA, "a");
        NameLease to = await Registry.OpenLeaseAsync(HostB, "b");
        await Registry.RegisterAsync(from.Id, Jobs, returnExisting: false);

        NameEntry moved = await Registry.MoveAsync(from.Id, "jobs", Incarnations.Of(to.Id));
        NameEntry? resolved = await Registry.ResolveAsync("jobs", TimeSpan.Zero);

        Assert.Equal(moved, resolved);
        Assert.Equal(HostB, moved.Endpoint);
        Assert.Equal(Incarnations.Of(to.Id), moved.Incarnation);
        Assert.True(moved.HasSameDefinition(Jobs));
        Assert.Equal(8, moved.BufferCapacity);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task MoveAsync_Moved_TheNameBelongsToTheNewLeaseNotTheOld()
    {
        NameLease from = await Registry.OpenLeaseAsync(HostA, "a");
        NameLease to = await Registry.OpenLeaseAsync(HostB, "b");
        await Registry.RegisterAsync(from.Id, Jobs, returnExisting: false);
        await Registry.MoveAsync(from.Id, "jobs", Incarnations.Of(to.Id));

        bool oldUnregistered = await Registry.UnregisterAsync(from.Id, "jobs");
        await Registry.CloseLeaseAsync(from.Id);
        NameEntry? afterOldLeft = await Registry.ResolveAsync("jobs", TimeSpan.Zero);
        await Registry.CloseLeaseAsync(to.Id);
        NameEntry? afterNewLeft = await Registry.ResolveAsync("jobs", TimeSpan.Zero);

        Assert.False(oldUnregistered);
        Assert.Equal(HostB, afterOldLeft?.Endpoint);
        Assert.Null(afterNewLeft);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task MoveAsync_NameOfAnotherLease_IsRefusedAndTheNameStays()
    {
        NameLease owner = await Registry.OpenLeaseAsync(HostA, "a");
        NameLease thief = await Registry.OpenLeaseAsync(HostB, "b");
        await Registry.RegisterAsync(owner.Id, Jobs, returnExisting: false);

        var e = await Assert.ThrowsAsync<NameMoveRefusedException>(() => Registry.MoveAsync(thief.Id, "jobs", Incarnations.Of(thief.Id)));
        await Assert.ThrowsAsync<NameMoveRefusedException>(() => Registry.MoveAsync(owner.Id, "unknown", Incarnations.Of(thief.Id)));

        Assert.Contains("'jobs'", e.Message, StringComparison.Ordinal);
        Assert.Equal(HostA, (await Registry.ResolveAsync("jobs", TimeSpan.Zero))?.Endpoint);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task MoveAsync_TargetGone_IsRefusedAndTheNameStays()
    {
        NameLease owner = await Registry.OpenLeaseAsync(HostA, "a");
        NameLease gone = await Registry.OpenLeaseAsync(HostB, "b");
        await Registry.RegisterAsync(owner.Id, Jobs, returnExisting: false);
        await Registry.CloseLeaseAsync(gone.Id);

        var e = await Assert.ThrowsAsync<NameMoveRefusedException>(() => Registry.MoveAsync(owner.Id, "jobs", Incarnations.Of(gone.Id)));

        Assert.Contains(Incarnations.Of(gone.Id), e.Message, StringComparison.Ordinal);
        Assert.Equal(HostA, (await Registry.ResolveAsync("jobs", TimeSpan.Zero))?.Endpoint);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task MoveAsync_UnknownLease_ThrowsLeaseNotFound()
    {
        NameLease to = await Registry.OpenLeaseAsync(HostB, "b");

        await Assert.ThrowsAsync<LeaseNotFoundException>(() => Registry.MoveAsync("no-such-lease", "jobs", Incarnations.Of(to.Id)));
    }
}

/// <summary>The move contract in memory.</summary>
public sealed class InMemoryNameMoveTests : NameMoveContractTests
{
    protected override Task<INameRegistry> CreateRegistryAsync() =>
        Task.FromResult<INameRegistry>(new InMemoryNameRegistry(new NameServerOptions { LeaseTtl = TimeSpan.FromSeconds(10) }));
}

/// <summary>The move contract against a real etcd, on a prefix of its own per test.</summary>
[RequiresEtcd]
public sealed class EtcdNameMoveTests(EtcdFixture etcd) : NameMoveContractTests, IClassFixture<EtcdFixture>
{
    protected override async Task<INameRegistry> CreateRegistryAsync() =>
        EtcdNameRegistryTests.Create(await etcd.GetAsync(), EtcdNameRegistryTests.NewPrefix());
}

/// <summary>
/// The move over the protocol, on NameServers of each registry: a program hands its name to
/// another, which keeps it across a NameServer restart (on etcd, a NameServer on a new prefix: a
/// table lost as an in-memory one is).
/// </summary>
public abstract class NameServerClientMoveTests(EtcdFixture? etcd) : RegistryTests(etcd)
{
    private static readonly NameEntry Jobs = new() { Name = "jobs", Kind = NameKind.One2Any, ValueType = "int32", BufferCapacity = 4 };

    [RegistryFact(Timeout = 30000)]
    public async Task MoveAsync_ToAnotherProgram_ResolvesThereAndOnlyTheNewHolderRegistersItAgainAfterARestart()
    {
        NameServerHost first = await StartHostAsync();
        int port = first.Port;
        await using NameServerClient oldHome = await NameServerClientTests.StartedClientAsync(first.Uri, 7001);
        await using NameServerClient newHome = await NameServerClientTests.StartedClientAsync(first.Uri, 7002);
        NameEntry registered = await oldHome.RegisterAsync(Jobs, returnExisting: false, CancellationToken.None);
        await newHome.AdoptAsync(registered, CancellationToken.None);

        NameEntry moved = await oldHome.MoveAsync("jobs", newHome.PublicIncarnation, CancellationToken.None);
        Assert.Equal(new LinkEndpoint("127.0.0.1", 7002), moved.Endpoint);
        Assert.Equal(newHome.PublicIncarnation, (await newHome.ResolveAsync("jobs", CancellationToken.None)).Incarnation);

        // A NameServer that restarts learns the name again from its new holder, never from the old one.
        await first.DisposeAsync();
        await using NameServerHost second = await StartHostAsync(new NameServerHostOptions { Port = port });
        await oldHome.RenewOnceAsync(CancellationToken.None);
        Assert.Null(await second.Registry.ResolveAsync("jobs", TimeSpan.Zero));
        await newHome.RenewOnceAsync(CancellationToken.None);
        NameEntry? again = await second.Registry.ResolveAsync("jobs", TimeSpan.Zero);
        Assert.Equal(newHome.PublicIncarnation, again?.Incarnation);
        Assert.Equal(4, again?.BufferCapacity);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task MoveAsync_NameOfAnotherProgram_ThrowsNameMoveRefusedAndTheNameStays()
    {
        await using NameServerHost host = await StartHostAsync();
        await using NameServerClient owner = await NameServerClientTests.StartedClientAsync(host.Uri, 7001);
        await using NameServerClient other = await NameServerClientTests.StartedClientAsync(host.Uri, 7002);
        await owner.RegisterAsync(Jobs, returnExisting: false, CancellationToken.None);

        var e = await Assert.ThrowsAsync<NameMoveRefusedException>(() => other.MoveAsync("jobs", other.PublicIncarnation, CancellationToken.None));

        Assert.Contains("only the program that holds a name moves it", e.Message, StringComparison.Ordinal);
        Assert.Equal(owner.PublicIncarnation, (await host.Registry.ResolveAsync("jobs", TimeSpan.Zero))?.Incarnation);
    }
}

/// <summary>The move over the protocol on NameServers that keep their table in memory (the default).</summary>
public sealed class InMemoryNameServerClientMoveTests() : NameServerClientMoveTests(null);

/// <summary>The move over the protocol on NameServers that keep their table in one etcd for the class.</summary>
[RequiresEtcd]
public sealed class EtcdNameServerClientMoveTests(EtcdFixture etcd) : NameServerClientMoveTests(etcd), IClassFixture<EtcdFixture>;
