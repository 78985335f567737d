using System.Text.Json;
using CspNet.NameServer;
using CspNet.NameServer.Internal.StatusReporting;
using CspNet.Remote.NameServer;
using Microsoft.Extensions.Options;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>The status page's snapshot, HTML, JSON and failure ring, on a manual clock and without a browser.</summary>
/// <remarks>
/// In memory only: the page lists names and leases only from an <see cref="InMemoryNameRegistry"/>'s
/// snapshot (over etcd it shows failures alone, which <see cref="EtcdStatusPageEndpointTests"/> covers).
/// </remarks>
public sealed class StatusPageRenderingTests : IDisposable
{
    private static readonly TimeSpan Ttl = TimeSpan.FromSeconds(10);
    private static readonly LinkEndpoint HostA = new("10.0.0.1", 7001);
    private static readonly LinkEndpoint HostB = new("10.0.0.2", 7002);

    private readonly ManualTimeProvider _time = new();
    private readonly RecentFailures _failures;
    private readonly InMemoryNameRegistry _registry;
    private readonly StatusPage _page;

    public StatusPageRenderingTests()
    {
        _failures = new RecentFailures(_time);
        var options = new NameServerOptions { LeaseTtl = Ttl };
        _registry = new InMemoryNameRegistry(options, _time) { Failures = _failures };
        _page = new StatusPage(_registry, _failures, _time, Options.Create(options), Options.Create(new NameServerStatusPageOptions()));
    }

    public void Dispose() => _registry.Dispose();

    [Fact]
    public async Task Render_NameAndLabelWithMarkup_AreHtmlEncoded()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "<b onmouseover=\"x()\">label</b>");
        await _registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel("<script>alert('x')</script>&co"), returnExisting: false);
        _failures.Record(FailureKind.Refused, "Register from <img src=x onerror=y()> answered InvalidArgument");

        string html = StatusPageRenderer.Render(_page.Snapshot());

        Assert.DoesNotContain("<script>", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("<b ", html, StringComparison.Ordinal);
        Assert.DoesNotContain("<img", html, StringComparison.Ordinal);
        Assert.Contains("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;co", html, StringComparison.Ordinal);
        Assert.Contains("&lt;b onmouseover=&quot;x()&quot;&gt;label&lt;/b&gt;", html, StringComparison.Ordinal);
        Assert.Contains("&lt;img src=x onerror=y()&gt;", html, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Snapshot_LeaseOpenedThenRenewed_ShowsItsAgeAndTimeLeft()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "producer");
        await _registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel("numbers"), returnExisting: false);
        _time.Advance(TimeSpan.FromSeconds(7));
        await _registry.RenewAsync(lease.Id);
        _time.Advance(TimeSpan.FromSeconds(2));

        StatusSnapshot snapshot = _page.Snapshot();
        string html = StatusPageRenderer.Render(snapshot);

        StatusName row = Assert.Single(snapshot.Registry!.Names);
        Assert.Equal(TimeSpan.FromSeconds(9), row.LeaseAge);
        Assert.Equal(TimeSpan.FromSeconds(8), row.ExpiresIn);
        Assert.Equal("producer", row.Program);
        Assert.Contains("<td class=\"num lease-age\">9 s</td><td class=\"num\">8 s</td>", html, StringComparison.Ordinal);
        Assert.Contains("10.0.0.1:7001", html, StringComparison.Ordinal);
        Assert.Contains("<meta http-equiv=\"refresh\" content=\"2\">", html, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Snapshot_PoolWithBusyWorkers_ShowsWorkersFreeAndBusy()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostB, "pool program");
        await _registry.RegisterPoolAsync(lease.Id, new WorkerPoolEntry { Name = "pool-1", Endpoint = new LinkEndpoint("10.0.0.2", 7100), Workers = 4, FreeWorkers = 4 });
        await _registry.UpdatePoolAsync(lease.Id, 1);

        StatusSnapshot snapshot = _page.Snapshot();
        string html = StatusPageRenderer.Render(snapshot);
        using JsonDocument json = JsonDocument.Parse(StatusJson.Render(snapshot));

        Assert.Contains("<td class=\"num workers\">4</td><td class=\"num free\">1</td><td class=\"num busy\">3</td>", html, StringComparison.Ordinal);
        JsonElement pool = Assert.Single(json.RootElement.GetProperty("pools").EnumerateArray());
        Assert.Equal("pool-1", pool.GetProperty("name").GetString());
        Assert.Equal("http://10.0.0.2:7100/", pool.GetProperty("uri").GetString());
        Assert.Equal(3, pool.GetProperty("busyWorkers").GetInt32());
        Assert.Equal(1, pool.GetProperty("freeWorkers").GetInt32());
        Assert.Equal("pool program", pool.GetProperty("program").GetString());
    }

    [Fact]
    public async Task LeaseExpiry_ProgramAndPool_RecordedNewestFirst()
    {
        NameLease program = await _registry.OpenLeaseAsync(HostA, "producer");
        await _registry.RegisterAsync(program.Id, InMemoryNameRegistryTests.Channel("a"), returnExisting: false);
        await _registry.RegisterAsync(program.Id, InMemoryNameRegistryTests.Channel("b"), returnExisting: false);
        _time.Advance(TimeSpan.FromSeconds(1));
        NameLease pool = await _registry.OpenLeaseAsync(HostB, "pool program");
        await _registry.RegisterPoolAsync(pool.Id, new WorkerPoolEntry { Name = "pool-1", Endpoint = new LinkEndpoint("10.0.0.2", 7100), Workers = 2 });

        _time.Advance(Ttl); // the program's lease expires first, then the pool's

        StatusSnapshot snapshot = _page.Snapshot();
        Assert.Equal(0, snapshot.Registry!.LeaseCount);
        Assert.Collection(
            snapshot.Failures,
            newest =>
            {
                Assert.Equal(FailureKind.PoolLost, newest.Kind);
                Assert.Contains("'pool-1' at 10.0.0.2:7100 (program 'pool program')", newest.Reason, StringComparison.Ordinal);
            },
            oldest =>
            {
                Assert.Equal(FailureKind.LeaseExpired, oldest.Kind);
                Assert.Equal("Program 'producer' at 10.0.0.1:7001 stopped renewing its lease; 2 names purged.", oldest.Reason);
            });
        Assert.Equal(new DateTimeOffset(2026, 1, 1, 0, 0, 10, TimeSpan.Zero), snapshot.Failures[1].Time);
        Assert.Contains("lease expired", StatusPageRenderer.Render(snapshot), StringComparison.Ordinal);
    }

    [Fact]
    public void RecentFailures_MoreThanCapacity_KeepsTheNewestAndCountsAll()
    {
        for (int i = 0; i < RecentFailures.Capacity + 7; i++)
        {
            _failures.Record(FailureKind.Refused, "failure " + i);
        }

        IReadOnlyList<FailureRecord> kept = _failures.Snapshot();
        string html = StatusPageRenderer.Render(_page.Snapshot());

        Assert.Equal(RecentFailures.Capacity, kept.Count);
        Assert.Equal("failure " + (RecentFailures.Capacity + 6), kept[0].Reason);
        Assert.Equal("failure 7", kept[^1].Reason);
        Assert.Equal(RecentFailures.Capacity + 7, _failures.Total);
        Assert.Contains($"The last {RecentFailures.Capacity} of {RecentFailures.Capacity + 7} since the NameServer started.", html, StringComparison.Ordinal);
    }

    [Fact]
    public void RecentFailures_LongReason_IsCutToTheLimit()
    {
        _failures.Record(FailureKind.Refused, new string('x', 10_000));

        FailureRecord record = Assert.Single(_failures.Snapshot());

        Assert.Equal(RecentFailures.MaxReasonLength, record.Reason.Length);
        Assert.EndsWith("…", record.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Snapshot_MoreNamesThanRows_ShowsTheRowLimitAndTheTotal()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "producer");
        for (int i = 0; i < 5; i++)
        {
            await _registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel("n" + i), returnExisting: false);
        }

        RegistrySnapshot registry = _registry.Snapshot(maxRows: 3);
        string html = StatusPageRenderer.Render(new StatusSnapshot(_time.GetUtcNow(), registry, [], 0, TimeSpan.FromSeconds(2)));

        Assert.Equal(3, registry.Names.Count);
        Assert.Equal(5, registry.NameCount);
        Assert.Equal(registry.Names.OrderBy(n => n.Entry.Name, StringComparer.Ordinal), registry.Names);
        Assert.Contains("Showing 3 of 5 names.", html, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Json_NamesAndFailures_CarryTheSameFactsAsThePage()
    {
        NameLease lease = await _registry.OpenLeaseAsync(HostA, "producer");
        await _registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel("numbers") with { BufferCapacity = 16 }, returnExisting: false);
        _time.Advance(TimeSpan.FromSeconds(3));
        _failures.Record(FailureKind.Unauthenticated, "no key \"quoted\"");

        using JsonDocument json = JsonDocument.Parse(StatusJson.Render(_page.Snapshot()));
        JsonElement root = json.RootElement;

        Assert.Equal(1, root.GetProperty("nameCount").GetInt32());
        Assert.Equal(10, root.GetProperty("leaseTtlSeconds").GetDouble());
        JsonElement name = Assert.Single(root.GetProperty("names").EnumerateArray());
        Assert.Equal("numbers", name.GetProperty("name").GetString());
        Assert.Equal("One2One", name.GetProperty("kind").GetString());
        Assert.Equal(16, name.GetProperty("bufferCapacity").GetInt32());
        Assert.Equal("10.0.0.1:7001", name.GetProperty("endpoint").GetString());
        Assert.Equal(3, name.GetProperty("leaseAgeSeconds").GetDouble());
        Assert.Equal(7, name.GetProperty("expiresInSeconds").GetDouble());
        JsonElement failure = Assert.Single(root.GetProperty("failures").EnumerateArray());
        Assert.Equal("Unauthenticated", failure.GetProperty("kind").GetString());
        Assert.Equal("no key \"quoted\"", failure.GetProperty("reason").GetString());
    }

    [Theory]
    [InlineData(0.25, "250 ms")]
    [InlineData(1.5, "1.5 s")]
    [InlineData(42, "42 s")]
    [InlineData(185, "3 min 05 s")]
    [InlineData(7620, "2 h 07 min")]
    [InlineData(3 * 86400 + 4 * 3600, "3 d 4 h")]
    [InlineData(-1, "0 ms")]
    public void Duration_Seconds_ReadsAsAPersonWould(double seconds, string expected)
    {
        Assert.Equal(expected, StatusPageRenderer.Duration(TimeSpan.FromSeconds(seconds)));
    }
}
