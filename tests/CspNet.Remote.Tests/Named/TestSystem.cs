using CspNet.NameServer;
using CspNet.Remote.Tests.NameServer;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// A NameServer hosted in this test process on 127.0.0.1 (port 0) and the nodes a test starts
/// against it; disposing stops them all, whatever the test did.
/// </summary>
internal sealed class TestSystem : IAsyncDisposable
{
    internal static readonly TimeSpan PeerTimeout = TimeSpan.FromSeconds(2);
    private readonly List<IAsyncDisposable> _owned = [];

    private TestSystem(NameServerHost host) => Host = host;

    internal NameServerHost Host { get; private set; }

    internal Uri NameServer => Host.Uri;

    internal static async Task<TestSystem> StartAsync() =>
        new(await NameServerHost.StartAsync(await HostOptions(0).ForThisRunAsync()));

    // Short leases: programs renew every third of it, so they notice a restarted NameServer quickly.
    private static NameServerHostOptions HostOptions(int port)
    {
        var options = new NameServerHostOptions { Port = port };
        options.NameServer.LeaseTtl = TimeSpan.FromSeconds(1.5);
        return options;
    }

    internal async Task<CspNode> NodeAsync(string label, Action<CspNodeOptions>? configure = null)
    {
        var options = new CspNodeOptions { NameServer = NameServer, PeerTimeout = PeerTimeout, ProgramLabel = label };
        configure?.Invoke(options);
        CspNode node = await CspNode.StartAsync(options);
        _owned.Add(node);
        return node;
    }

    internal ChildNode Child(params string[] scenario)
    {
        ChildNode child = ChildNode.Start(NameServer, scenario);
        _owned.Add(child);
        return child;
    }

    /// <summary>Stops the NameServer and starts a new one (empty registry; on etcd, a new prefix) on the same port.</summary>
    internal async Task RestartNameServerAsync()
    {
        int port = Host.Port;
        await Host.DisposeAsync();
        Host = await NameServerHost.StartAsync(await HostOptions(port).ForThisRunAsync());
    }

    public async ValueTask DisposeAsync()
    {
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            await _owned[i].DisposeAsync();
        }

        await Host.DisposeAsync();
    }
}
