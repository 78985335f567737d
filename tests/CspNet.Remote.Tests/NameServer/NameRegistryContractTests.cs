using CspNet.NameServer;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// What every <see cref="INameRegistry"/> must do, run against each implementation by a
/// subclass: <see cref="InMemoryNameRegistryTests"/> and <see cref="EtcdNameRegistryContractTests"/>.
/// What depends on one implementation's internals (a manual clock driving lease expiry, exact
/// capacity counting) stays in that implementation's own class.
/// </summary>
public abstract class NameRegistryContractTests : IAsyncLifetime
{
    protected static readonly TimeSpan Ttl = TimeSpan.FromSeconds(10);
    protected static readonly LinkEndpoint HostA = new("10.0.0.1", 7001);
    protected static readonly LinkEndpoint HostB = new("hostb.example", 7002);
    protected static readonly LinkEndpoint PoolLink = new("127.0.0.1", 7001);

    private INameRegistry? _registry;

    /// <summary>Drives resolve waits (and, in memory, lease expiry).</summary>
    internal ManualTimeProvider Time { get; } = new();

    protected INameRegistry Registry => _registry ?? throw new InvalidOperationException("InitializeAsync has not run.");

    internal static NameEntry Channel(string name) => new() { Name = name, Kind = NameKind.One2One, ValueType = "int32" };

    internal static WorkerPoolEntry Pool(string name, int workers, int free, int port = 8001) =>
        new() { Name = name, Endpoint = new LinkEndpoint("127.0.0.1", port), Workers = workers, FreeWorkers = free, Incarnation = "forged" };

    /// <summary>An empty registry with lease time to live <see cref="Ttl"/> and a 30 s maximum resolve wait, on <paramref name="time"/>.</summary>
    protected abstract Task<INameRegistry> CreateRegistryAsync(TimeProvider time);

    public async Task InitializeAsync() => _registry = await CreateRegistryAsync(Time);

    public Task DisposeAsync()
    {
        (_registry as IDisposable)?.Dispose();
        return Task.CompletedTask;
    }

    [RegistryFact]
    public async Task RenewAsync_OpenLease_ReturnsTheTimeToLiveAndAClosedLeaseIsUnknown()
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");

        Assert.Equal(Ttl, await Registry.RenewAsync(lease.Id));
        await Registry.CloseLeaseAsync(lease.Id);
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => Registry.RenewAsync(lease.Id));
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => Registry.RenewAsync("no-such-lease"));
    }

    [RegistryFact]
    public async Task RegisterAsync_NewName_ResolvesWithTheLeaseEndpointAndIncarnation()
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "producer (42)");
        NameEntry asked = Channel("numbers") with { Endpoint = HostB, Incarnation = "forged" };

        NameRegistration registration = await Registry.RegisterAsync(lease.Id, asked, returnExisting: false);
        NameEntry? resolved = await Registry.ResolveAsync("numbers", TimeSpan.Zero);

        Assert.True(registration.Created);
        Assert.Equal(Ttl, lease.TimeToLive);
        Assert.Equal(HostA, resolved!.Endpoint);
        Assert.Equal(Incarnations.Of(lease.Id), resolved.Incarnation);
        Assert.NotEqual(lease.Id, resolved.Incarnation); // the lease id stays secret
        Assert.Equal(registration.Entry, resolved);
        Assert.True(resolved.HasSameDefinition(asked));
    }

    [RegistryFact]
    public async Task RegisterAsync_TakenName_ThrowsSayingWhereItLives()
    {
        NameLease first = await Registry.OpenLeaseAsync(HostA, "producer (42)");
        NameLease second = await Registry.OpenLeaseAsync(HostB, "consumer (43)");
        await Registry.RegisterAsync(first.Id, Channel("numbers"), returnExisting: false);

        var e = await Assert.ThrowsAsync<NameAlreadyRegisteredException>(() => Registry.RegisterAsync(second.Id, Channel("numbers"), returnExisting: false));

        Assert.Contains("10.0.0.1:7001", e.Message, StringComparison.Ordinal);
        Assert.Contains("producer (42)", e.Message, StringComparison.Ordinal);
        Assert.Equal("producer (42)", e.OwnerProgram);
        Assert.Equal(Incarnations.Of(first.Id), e.Existing!.Incarnation);
    }

    [RegistryFact]
    public async Task RegisterAsync_TakenNameWithReturnExisting_ReturnsTheExistingEntry()
    {
        NameLease first = await Registry.OpenLeaseAsync(HostA, "a");
        NameLease second = await Registry.OpenLeaseAsync(HostB, "b");
        NameRegistration original = await Registry.RegisterAsync(first.Id, Channel("shared"), returnExisting: false);

        NameRegistration again = await Registry.RegisterAsync(second.Id, Channel("shared") with { Kind = NameKind.Any2Any }, returnExisting: true);

        Assert.False(again.Created);
        Assert.Equal(original.Entry, again.Entry);
    }

    [RegistryFact]
    public async Task RegisterAsync_SameDefinitionUnderSameLease_IsNotAConflict()
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");
        await Registry.RegisterAsync(lease.Id, Channel("retried"), returnExisting: false);

        NameRegistration again = await Registry.RegisterAsync(lease.Id, Channel("retried"), returnExisting: false);
        var changed = Channel("retried") with { BufferCapacity = 5 };

        Assert.False(again.Created);
        await Assert.ThrowsAsync<NameAlreadyRegisteredException>(() => Registry.RegisterAsync(lease.Id, changed, returnExisting: false));
    }

    [RegistryFact]
    public async Task RegisterAsync_UnknownLease_ThrowsLeaseNotFound()
    {
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => Registry.RegisterAsync("no-such-lease", Channel("x"), returnExisting: false));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_NameRegisteredWhileWaiting_WakesTheWaiter()
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");
        Task<NameEntry?> first = Registry.ResolveAsync("later", TimeSpan.FromSeconds(5));
        Task<NameEntry?> second = Registry.ResolveAsync("later", TimeSpan.FromSeconds(5));
        Assert.False(first.IsCompleted);

        await Registry.RegisterAsync(lease.Id, Channel("later"), returnExisting: false);

        Assert.Equal("later", (await first)!.Name);
        Assert.Equal("later", (await second)!.Name);
    }

    [RegistryFact]
    public async Task ResolveAsync_ZeroWaitForUnknownName_ReturnsNullAtOnce()
    {
        Assert.Null(await Registry.ResolveAsync("unknown", TimeSpan.Zero));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_WaitElapses_ReturnsNull()
    {
        Task<NameEntry?> resolve = Registry.ResolveAsync("never", TimeSpan.FromSeconds(2));
        Time.Advance(TimeSpan.FromSeconds(1));
        Assert.False(resolve.IsCompleted);

        Time.Advance(TimeSpan.FromSeconds(1));

        Assert.Null(await resolve);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_WaitAboveMaximum_IsCapped()
    {
        Task<NameEntry?> resolve = Registry.ResolveAsync("never", TimeSpan.FromHours(1));

        Time.Advance(TimeSpan.FromSeconds(30));

        Assert.Null(await resolve);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_Cancelled_ThrowsAndALaterRegistrationStillWorks()
    {
        using var cts = new CancellationTokenSource();
        Task<NameEntry?> resolve = Registry.ResolveAsync("cancelled", TimeSpan.FromSeconds(5), cts.Token);

        await cts.CancelAsync();
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");
        NameRegistration registration = await Registry.RegisterAsync(lease.Id, Channel("cancelled"), returnExisting: false);

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => resolve);
        Assert.True(registration.Created);
    }

    [RegistryFact]
    public async Task UnregisterAsync_OwnName_RemovesIt()
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");
        await Registry.RegisterAsync(lease.Id, Channel("gone"), returnExisting: false);

        Assert.True(await Registry.UnregisterAsync(lease.Id, "gone"));
        Assert.Null(await Registry.ResolveAsync("gone", TimeSpan.Zero));
        Assert.False(await Registry.UnregisterAsync(lease.Id, "gone"));
    }

    [RegistryFact]
    public async Task UnregisterAsync_NameOfAnotherLease_ReturnsFalseAndKeepsIt()
    {
        NameLease owner = await Registry.OpenLeaseAsync(HostA, "a");
        NameLease other = await Registry.OpenLeaseAsync(HostB, "b");
        await Registry.RegisterAsync(owner.Id, Channel("kept"), returnExisting: false);

        Assert.False(await Registry.UnregisterAsync(other.Id, "kept"));
        Assert.NotNull(await Registry.ResolveAsync("kept", TimeSpan.Zero));
    }

    [RegistryFact]
    public async Task CloseLeaseAsync_OpenLease_RemovesItsNamesAtOnce()
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");
        await Registry.RegisterAsync(lease.Id, Channel("one"), returnExisting: false);

        await Registry.CloseLeaseAsync(lease.Id);

        Assert.Null(await Registry.ResolveAsync("one", TimeSpan.Zero));
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => Registry.CloseLeaseAsync(lease.Id));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task Dispose_WhileResolving_FailsTheWaiter()
    {
        using IDisposable owned = (IDisposable)await CreateRegistryAsync(Time);
        var registry = (INameRegistry)owned;
        Task<NameEntry?> resolve = registry.ResolveAsync("never", TimeSpan.FromSeconds(5));

        owned.Dispose();

        await Assert.ThrowsAsync<ObjectDisposedException>(() => resolve);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => registry.OpenLeaseAsync(HostA, "a"));
    }

    [RegistryTheory]
    [MemberData(nameof(InvalidEntries))]
    public async Task RegisterAsync_InvalidEntry_ThrowsArgumentException(string name, NameKind kind, string valueType, int capacity)
    {
        NameLease lease = await Registry.OpenLeaseAsync(HostA, "a");
        var entry = new NameEntry { Name = name, Kind = kind, ValueType = valueType, BufferCapacity = capacity };

        await Assert.ThrowsAnyAsync<ArgumentException>(() => Registry.RegisterAsync(lease.Id, entry, returnExisting: false));
    }

    [RegistryTheory]
    [InlineData("", 80)]
    [InlineData("host name", 80)]
    [InlineData("host\n", 80)]
    [InlineData("localhost", 0)]
    [InlineData("localhost", 65536)]
    [InlineData("::1", -1)]
    public async Task OpenLeaseAsync_InvalidEndpoint_ThrowsArgumentException(string host, int port)
    {
        await Assert.ThrowsAnyAsync<ArgumentException>(() => Registry.OpenLeaseAsync(new LinkEndpoint(host, port), "a"));
    }

    public static TheoryData<string, NameKind, string, int> InvalidEntries => new()
    {
        { "", NameKind.One2One, "int32", 0 },
        { new string('n', 257), NameKind.One2One, "int32", 0 },
        { "tab\there", NameKind.One2One, "int32", 0 },
        { "bell\a", NameKind.Barrier, "", 0 },
        { "kind", (NameKind)42, "int32", 0 },
        { "no-type", NameKind.Any2Any, "", 0 },
        { "capacity", NameKind.One2Any, "int32", -2 },
        { "typed-barrier", NameKind.Barrier, "int32", 0 },
        { "buffered-bucket", NameKind.Bucket, "", 3 },
    };

    [RegistryFact]
    public async Task ListPoolsAsync_SeveralPools_ListsThoseWithEnoughFreeWorkersMostFreeFirst()
    {
        NameLease a = await Registry.OpenLeaseAsync(PoolLink, "a");
        NameLease b = await Registry.OpenLeaseAsync(PoolLink, "b");
        NameLease c = await Registry.OpenLeaseAsync(PoolLink, "c");
        await Registry.RegisterPoolAsync(a.Id, Pool("a", 4, 1));
        await Registry.RegisterPoolAsync(b.Id, Pool("b", 4, 3));
        await Registry.RegisterPoolAsync(c.Id, Pool("c", 4, 0));

        IReadOnlyList<WorkerPoolEntry> pools = await Registry.ListPoolsAsync(1);

        Assert.Equal(["b", "a"], pools.Select(p => p.Name));
        Assert.Equal(Incarnations.Of(b.Id), pools[0].Incarnation); // taken from the lease, not the request
    }

    [RegistryFact]
    public async Task UpdatePoolAsync_NewFreeCount_IsWhatListPoolsShows()
    {
        NameLease lease = await Registry.OpenLeaseAsync(PoolLink, "a");
        await Registry.RegisterPoolAsync(lease.Id, Pool("a", 4, 4));

        await Registry.UpdatePoolAsync(lease.Id, 0);

        Assert.Empty(await Registry.ListPoolsAsync(1));
        Assert.Equal(0, Assert.Single(await Registry.ListPoolsAsync(0)).FreeWorkers);
    }

    [RegistryFact]
    public async Task UpdatePoolAsync_MoreFreeThanWorkersOrNoPool_Throws()
    {
        NameLease lease = await Registry.OpenLeaseAsync(PoolLink, "a");

        await Assert.ThrowsAsync<LeaseNotFoundException>(() => Registry.UpdatePoolAsync(lease.Id, 1));
        await Registry.RegisterPoolAsync(lease.Id, Pool("a", 4, 4));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => Registry.UpdatePoolAsync(lease.Id, 5));
    }

    [RegistryFact]
    public async Task RegisterPoolAsync_SameLeaseAgain_ReplacesThePool()
    {
        NameLease lease = await Registry.OpenLeaseAsync(PoolLink, "a");
        await Registry.RegisterPoolAsync(lease.Id, Pool("a", 4, 4));

        await Registry.RegisterPoolAsync(lease.Id, Pool("a", 8, 8, port: 8002));

        WorkerPoolEntry pool = Assert.Single(await Registry.ListPoolsAsync(0));
        Assert.Equal(8, pool.Workers);
        Assert.Equal(8002, pool.Endpoint.Port);
    }

    [RegistryTheory]
    [InlineData("", 1, 0)]
    [InlineData("a", 0, 0)]
    [InlineData("a", 2, 3)]
    [InlineData("a\u0001", 2, 1)]
    public async Task RegisterPoolAsync_MalformedPool_ThrowsArgumentException(string name, int workers, int free)
    {
        NameLease lease = await Registry.OpenLeaseAsync(PoolLink, "a");

        await Assert.ThrowsAnyAsync<ArgumentException>(() => Registry.RegisterPoolAsync(lease.Id, Pool(name, workers, free)));
    }
}
