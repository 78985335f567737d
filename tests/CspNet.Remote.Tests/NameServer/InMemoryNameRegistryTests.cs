using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.NameServer;

public sealed class InMemoryNameRegistryTests : IDisposable
{
    private static readonly TimeSpan Ttl = TimeSpan.FromSeconds(10);
    private static readonly LinkEndpoint HostA = new("10.0.0.1", 7001);
    private static readonly LinkEndpoint HostB = new("hostb.example", 7002);

    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNameRegistry _registry;

    public InMemoryNameRegistryTests()
    {
        _registry = new InMemoryNameRegistry(new NameServerOptions { LeaseTtl = Ttl, MaxResolveWait = TimeSpan.FromSeconds(30) }, _time);
    }

    public void Dispose() => _registry.Dispose();

    internal static NameEntry Channel(string name) => new() { Name = name, Kind = NameKind.One2One, ValueType = "int32" };

    [Fact]
    public async Task RegisterAsync_NewName_ResolvesWithTheLeaseEndpointAndIncarnation()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "producer (42)");
        NameEntry asked = Channel("numbers") with { Endpoint = HostB, Incarnation = "forged" };

        NameRegistration registration = await _registry.RegisterAsync(lease.Id, asked, returnExisting: false);
        NameEntry? resolved = await _registry.ResolveAsync("numbers", TimeSpan.Zero);

        Assert.True(registration.Created);
        Assert.Equal(Ttl, lease.TimeToLive);
        Assert.Equal(HostA, resolved!.Endpoint);
        Assert.Equal(Incarnations.Of(lease.Id), resolved.Incarnation);
        Assert.NotEqual(lease.Id, resolved.Incarnation); // the lease id stays secret
        Assert.Equal(registration.Entry, resolved);
        Assert.True(resolved.HasSameDefinition(asked));
    }

    [Fact]
    public async Task RegisterAsync_TakenName_ThrowsSayingWhereItLives()
    {
        NameLease first = await _registry.OpenLeaseAsync(HostA, "producer (42)");
        NameLease second = await _registry.OpenLeaseAsync(HostB, "consumer (43)");
        await _registry.RegisterAsync(first.Id, Channel("numbers"), returnExisting: false);

        var e = await Assert.ThrowsAsync<NameAlreadyRegisteredException>(() => _registry.RegisterAsync(second.Id, Channel("numbers"), returnExisting: false));

        Assert.Contains("10.0.0.1:7001", e.Message, StringComparison.Ordinal);
        Assert.Contains("producer (42)", e.Message, StringComparison.Ordinal);
        Assert.Equal("producer (42)", e.OwnerProgram);
        Assert.Equal(Incarnations.Of(first.Id), e.Existing!.Incarnation);
    }

    [Fact]
    public async Task RegisterAsync_TakenNameWithReturnExisting_ReturnsTheExistingEntry()
    {
        NameLease first = await _registry.OpenLeaseAsync(HostA, "a");
        NameLease second = await _registry.OpenLeaseAsync(HostB, "b");
        NameRegistration original = await _registry.RegisterAsync(first.Id, Channel("shared"), returnExisting: false);

        NameRegistration again = await _registry.RegisterAsync(second.Id, Channel("shared") with { Kind = NameKind.Any2Any }, returnExisting: true);

        Assert.False(again.Created);
        Assert.Equal(original.Entry, again.Entry);
    }

    [Fact]
    public async Task RegisterAsync_SameDefinitionUnderSameLease_IsNotAConflict()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "a");
        await _registry.RegisterAsync(lease.Id, Channel("retried"), returnExisting: false);

        NameRegistration again = await _registry.RegisterAsync(lease.Id, Channel("retried"), returnExisting: false);
        var changed = Channel("retried") with { BufferCapacity = 5 };

        Assert.False(again.Created);
        await Assert.ThrowsAsync<NameAlreadyRegisteredException>(() => _registry.RegisterAsync(lease.Id, changed, returnExisting: false));
    }

    [Fact]
    public async Task RegisterAsync_UnknownLease_ThrowsLeaseNotFound()
    {
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => _registry.RegisterAsync("no-such-lease", Channel("x"), returnExisting: false));
    }

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_NameRegisteredWhileWaiting_WakesTheWaiter()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "a");
        Task<NameEntry?> first = _registry.ResolveAsync("later", TimeSpan.FromSeconds(5));
        Task<NameEntry?> second = _registry.ResolveAsync("later", TimeSpan.FromSeconds(5));
        Assert.False(first.IsCompleted);

        await _registry.RegisterAsync(lease.Id, Channel("later"), returnExisting: false);

        Assert.Equal("later", (await first)!.Name);
        Assert.Equal("later", (await second)!.Name);
    }

    [Fact]
    public async Task ResolveAsync_ZeroWaitForUnknownName_ReturnsNullAtOnce()
    {
        Assert.Null(await _registry.ResolveAsync("unknown", TimeSpan.Zero));
    }

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_WaitElapses_ReturnsNull()
    {
        Task<NameEntry?> resolve = _registry.ResolveAsync("never", TimeSpan.FromSeconds(2));
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.False(resolve.IsCompleted);

        _time.Advance(TimeSpan.FromSeconds(1));

        Assert.Null(await resolve);
    }

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_WaitAboveMaximum_IsCapped()
    {
        Task<NameEntry?> resolve = _registry.ResolveAsync("never", TimeSpan.FromHours(1));

        _time.Advance(TimeSpan.FromSeconds(30));

        Assert.Null(await resolve);
    }

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_Cancelled_ThrowsAndALaterRegistrationStillWorks()
    {
        using var cts = new CancellationTokenSource();
        Task<NameEntry?> resolve = _registry.ResolveAsync("cancelled", TimeSpan.FromSeconds(5), cts.Token);

        await cts.CancelAsync();
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "a");
        NameRegistration registration = await _registry.RegisterAsync(lease.Id, Channel("cancelled"), returnExisting: false);

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => resolve);
        Assert.True(registration.Created);
    }

    [Fact]
    public async Task UnregisterAsync_OwnName_RemovesIt()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "a");
        await _registry.RegisterAsync(lease.Id, Channel("gone"), returnExisting: false);

        Assert.True(await _registry.UnregisterAsync(lease.Id, "gone"));
        Assert.Null(await _registry.ResolveAsync("gone", TimeSpan.Zero));
        Assert.False(await _registry.UnregisterAsync(lease.Id, "gone"));
    }

    [Fact]
    public async Task UnregisterAsync_NameOfAnotherLease_ReturnsFalseAndKeepsIt()
    {
        NameLease owner = await _registry.OpenLeaseAsync(HostA, "a");
        NameLease other = await _registry.OpenLeaseAsync(HostB, "b");
        await _registry.RegisterAsync(owner.Id, Channel("kept"), returnExisting: false);

        Assert.False(await _registry.UnregisterAsync(other.Id, "kept"));
        Assert.NotNull(await _registry.ResolveAsync("kept", TimeSpan.Zero));
    }

    [Fact]
    public async Task LeaseExpiry_NoRenewal_PurgesTheLeaseAndItsNames()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "a");
        await _registry.RegisterAsync(lease.Id, Channel("one"), returnExisting: false);
        await _registry.RegisterAsync(lease.Id, new NameEntry { Name = "sync", Kind = NameKind.Barrier }, returnExisting: false);
        _time.Advance(Ttl - TimeSpan.FromTicks(1));
        Assert.Equal(2, _registry.NameCount);

        _time.Advance(TimeSpan.FromTicks(1));

        // The timer purged, before any call looked.
        Assert.Equal(0, _registry.NameCount);
        Assert.Equal(0, _registry.LeaseCount);
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => _registry.RenewAsync(lease.Id));
    }

    [Fact]
    public async Task RenewAsync_BeforeExpiry_KeepsTheNames()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "a");
        NameLease idle = await _registry.OpenLeaseAsync(HostB, "b");
        await _registry.RegisterAsync(lease.Id, Channel("alive"), returnExisting: false);
        await _registry.RegisterAsync(idle.Id, Channel("dead"), returnExisting: false);

        for (int i = 0; i < 5; i++)
        {
            _time.Advance(Ttl / 3);
            Assert.Equal(Ttl, await _registry.RenewAsync(lease.Id));
        }

        Assert.NotNull(await _registry.ResolveAsync("alive", TimeSpan.Zero));
        Assert.Null(await _registry.ResolveAsync("dead", TimeSpan.Zero));
        Assert.Equal(1, _registry.LeaseCount);
    }

    [Fact]
    public async Task CloseLeaseAsync_OpenLease_RemovesItsNamesAtOnce()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "a");
        await _registry.RegisterAsync(lease.Id, Channel("one"), returnExisting: false);

        await _registry.CloseLeaseAsync(lease.Id);

        Assert.Null(await _registry.ResolveAsync("one", TimeSpan.Zero));
        await Assert.ThrowsAsync<LeaseNotFoundException>(() => _registry.CloseLeaseAsync(lease.Id));
    }

    [Fact]
    public async Task OpenLeaseAsync_AtTheLeaseLimit_ThrowsCapacityExceeded()
    {
        using var small = new InMemoryNameRegistry(new NameServerOptions { MaxLeases = 1, MaxNames = 1 }, _time);
        NameLease lease = await small.OpenLeaseAsync(HostA, "a");
        await small.RegisterAsync(lease.Id, Channel("one"), returnExisting: false);

        await Assert.ThrowsAsync<NameServerCapacityExceededException>(() => small.OpenLeaseAsync(HostB, "b"));
        await Assert.ThrowsAsync<NameServerCapacityExceededException>(() => small.RegisterAsync(lease.Id, Channel("two"), returnExisting: false));
    }

    [Fact(Timeout = 30000)]
    public async Task Dispose_WhileResolving_FailsTheWaiter()
    {
        using var registry = new InMemoryNameRegistry(timeProvider: _time);
        Task<NameEntry?> resolve = registry.ResolveAsync("never", TimeSpan.FromSeconds(5));

        registry.Dispose();

        await Assert.ThrowsAsync<ObjectDisposedException>(() => resolve);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => registry.OpenLeaseAsync(HostA, "a"));
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

    [Theory]
    [MemberData(nameof(InvalidEntries))]
    public async Task RegisterAsync_InvalidEntry_ThrowsArgumentException(string name, NameKind kind, string valueType, int capacity)
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "a");
        var entry = new NameEntry { Name = name, Kind = kind, ValueType = valueType, BufferCapacity = capacity };

        await Assert.ThrowsAnyAsync<ArgumentException>(() => _registry.RegisterAsync(lease.Id, entry, returnExisting: false));
    }

    [Theory]
    [InlineData("", 80)]
    [InlineData("host name", 80)]
    [InlineData("host\n", 80)]
    [InlineData("localhost", 0)]
    [InlineData("localhost", 65536)]
    [InlineData("::1", -1)]
    public async Task OpenLeaseAsync_InvalidEndpoint_ThrowsArgumentException(string host, int port)
    {
        await Assert.ThrowsAnyAsync<ArgumentException>(() => _registry.OpenLeaseAsync(new LinkEndpoint(host, port), "a"));
    }

    [Fact]
    public void LinkEndpoint_IPv6Host_FormatsWithBrackets()
    {
        Assert.Equal("[::1]:7000", new LinkEndpoint("::1", 7000).ToString());
        Assert.Equal("localhost:7000", new LinkEndpoint("localhost", 7000).ToString());
    }
}
