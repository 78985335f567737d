using CspNet.NameServer;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// A name taken by another program while its owner's lease was gone: the owner is told, not only a log line.
/// The NameServer comes back with an empty table (on etcd, a new prefix), as one whose table was lost.
/// </summary>
public abstract class NameTakeoverTests(EtcdFixture? etcd) : RegistryTests(etcd)
{
    private const int Timeout = 30_000;

    [RegistryFact(Timeout = Timeout)]
    public async Task RenewOnceAsync_SquatterRegisteredDuringRestart_RaisesNameLostAtTheOwner()
    {
        NameServerHost first = await StartHostAsync();
        int port = first.Port;
        await using var owner = new NameServerClient(first.Uri, new LinkEndpoint("127.0.0.1", 7001), "owner", new NameServerClientOptions { TimeProvider = new ManualTimeProvider() });
        await owner.StartAsync(CancellationToken.None);
        await owner.RegisterAsync(InMemoryNameRegistryTests.Channel("numbers"), returnExisting: false, CancellationToken.None);
        await owner.RegisterAsync(InMemoryNameRegistryTests.Channel("kept"), returnExisting: false, CancellationToken.None);
        var lost = new List<(string Name, string Detail)>();
        owner.NameLost += (name, detail) => lost.Add((name, detail));
        await first.DisposeAsync();
        await using NameServerHost second = await StartHostAsync(new NameServerHostOptions { Port = port, BeforeListening = SquatAsync("numbers") });

        await owner.RenewOnceAsync(CancellationToken.None);

        (string name, string detail) = Assert.Single(lost);
        Assert.Equal("numbers", name);
        Assert.Contains("numbers", detail, StringComparison.Ordinal);
        Assert.Equal(owner.PublicIncarnation, (await second.Registry.ResolveAsync("kept", TimeSpan.Zero))!.Incarnation);
    }

    [RegistryFact(Timeout = Timeout)]
    public async Task NameLost_SquatterRegisteredDuringRestart_TheOwningNodeIsTold()
    {
        NameServerHost first = await StartHostAsync();
        int port = first.Port;
        await using CspNode owner = await CspNode.StartAsync(new CspNodeOptions { NameServer = first.Uri, ProgramLabel = "owner" });
        _ = await owner.GetOne2OneInAsync<int>("numbers");
        var told = new TaskCompletionSource<NameLostEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        owner.NameLost += (sender, e) =>
        {
            Assert.Same(owner, sender);
            told.TrySetResult(e);
        };
        await first.DisposeAsync();

        // The squatter's registration is in before the restarted NameServer takes any call.
        await using NameServerHost second = await StartHostAsync(new NameServerHostOptions { Port = port, BeforeListening = SquatAsync("numbers") });
        NameLostEventArgs lost = await told.Task;

        Assert.Equal("numbers", lost.Name);
        Assert.Contains("numbers", lost.Detail, StringComparison.Ordinal);
    }

    private static Func<INameRegistry, Task> SquatAsync(string name) => async registry =>
    {
        NameLease lease = await registry.OpenLeaseAsync(new LinkEndpoint("127.0.0.1", 7999), "squatter");
        await registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel(name), returnExisting: false);
    };
}

/// <summary>The takeover on NameServers that keep their table in memory (the default).</summary>
public sealed class InMemoryNameTakeoverTests() : NameTakeoverTests(null);

/// <summary>The takeover on NameServers that keep their table in one etcd for the class.</summary>
[RequiresEtcd]
public sealed class EtcdNameTakeoverTests(EtcdFixture etcd) : NameTakeoverTests(etcd), IClassFixture<EtcdFixture>;
