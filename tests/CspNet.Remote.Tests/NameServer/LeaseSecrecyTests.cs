using CspNet.NameServer;
using CspNet.Remote.NameServer;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Testing;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// A lease id is a program's credential at the NameServer (whoever knows it can register and
/// remove names under it): no log line, at any level, carries one; logs name the public incarnation.
/// <see cref="InMemoryLeaseSecrecyTests"/> and <see cref="EtcdLeaseSecrecyTests"/> run it on each registry.
/// </summary>
public abstract class LeaseSecrecyTests(EtcdFixture? etcd) : RegistryTests(etcd)
{
    [RegistryFact(Timeout = 30_000)]
    public async Task Logs_LeaseOpenedUsedRefusedAndClosed_NeverContainALeaseId()
    {
        var logs = FakeLogCollector.Create(new FakeLogCollectorOptions());
        using var provider = new FakeLoggerProvider(logs);
        using ILoggerFactory loggers = LoggerFactory.Create(b => b.AddProvider(provider).SetMinimumLevel(LogLevel.Trace));
        await using NameServerHost host = await StartHostAsync(new NameServerHostOptions { LoggerFactory = loggers });
        string leaseId;
        await using (CspNode node = await CspNode.StartAsync(new CspNodeOptions { NameServer = host.Uri, LoggerFactory = loggers }))
        {
            _ = await node.GetOne2OneInAsync<int>("secret-holder");
            leaseId = node.Names!.Incarnation;

            // Refusals under a lease travel to the caller, the log and the status page's failures.
            var unknown = await Assert.ThrowsAsync<LeaseNotFoundException>(() => host.Registry.RenewAsync(leaseId + "x"));
            var noPool = await Assert.ThrowsAsync<LeaseNotFoundException>(() => host.Registry.UpdatePoolAsync(leaseId, 1));
            Assert.DoesNotContain(leaseId, unknown.Message, StringComparison.Ordinal);
            Assert.DoesNotContain(leaseId, noPool.Message, StringComparison.Ordinal);
        }

        IReadOnlyList<FakeLogRecord> records = logs.GetSnapshot();
        Assert.Contains(records, record => record.Message.Contains("incarnation", StringComparison.Ordinal));
        Assert.DoesNotContain(records, record => record.Message.Contains(leaseId, StringComparison.Ordinal) || (record.Exception?.ToString().Contains(leaseId, StringComparison.Ordinal) ?? false));
    }
}

/// <summary>Lease ids in the logs of the in-memory registry, which also expires leases itself.</summary>
public sealed class InMemoryLeaseSecrecyTests() : LeaseSecrecyTests(null)
{
    // In memory only: the registry's own clock expires the lease and logs it. On etcd, etcd
    // expires leases and the registry logs nothing at expiry (its log lines are covered above).

    [Fact]
    public async Task Logs_LeaseExpired_NamesTheIncarnationNotTheLeaseId()
    {
        var logs = FakeLogCollector.Create(new FakeLogCollectorOptions());
        var time = new ManualTimeProvider();
        var registry = new InMemoryNameRegistry(new NameServerOptions { LeaseTtl = TimeSpan.FromSeconds(2) }, time, new FakeLogger<InMemoryNameRegistry>(logs));
        NameLease lease = await registry.OpenLeaseAsync(new LinkEndpoint("127.0.0.1", 7000), "quiet");

        time.Advance(TimeSpan.FromSeconds(3));

        FakeLogRecord expired = Assert.Single(logs.GetSnapshot(), record => record.Message.Contains("expired", StringComparison.Ordinal));
        Assert.DoesNotContain(lease.Id, expired.Message, StringComparison.Ordinal);
        Assert.Contains(Incarnations.Of(lease.Id), expired.Message, StringComparison.Ordinal);
    }
}

/// <summary>Lease ids in the logs of a NameServer that keeps its table in one etcd for the class.</summary>
[RequiresEtcd]
public sealed class EtcdLeaseSecrecyTests(EtcdFixture etcd) : LeaseSecrecyTests(etcd), IClassFixture<EtcdFixture>;
