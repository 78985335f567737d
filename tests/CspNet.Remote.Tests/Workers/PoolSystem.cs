using CspNet.NameServer;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.Tests.NameServer;
using CspNet.Remote.Workers;

namespace CspNet.Remote.Tests.Workers;

/// <summary>A NameServer, worker pools and client nodes hosted in this test process; disposing stops them all.</summary>
internal sealed class PoolSystem : IAsyncDisposable
{
    internal static readonly TimeSpan PeerTimeout = TimeSpan.FromSeconds(2);
    private readonly List<IAsyncDisposable> _owned = [];

    private PoolSystem(NameServerHost host) => Host = host;

    internal NameServerHost Host { get; private set; }

    internal static async Task<PoolSystem> StartAsync() => new(await NameServerHost.StartAsync(await HostOptions(0).ForThisRunAsync()));

    /// <summary>Stops the NameServer and starts a new one (empty registry; on etcd, a new prefix) on the same port.</summary>
    internal async Task RestartNameServerAsync()
    {
        int port = Host.Port;
        await Host.DisposeAsync();
        Host = await NameServerHost.StartAsync(await HostOptions(port).ForThisRunAsync());
    }

    private static NameServerHostOptions HostOptions(int port)
    {
        var options = new NameServerHostOptions { Port = port };
        options.NameServer.LeaseTtl = TimeSpan.FromSeconds(1.5);
        return options;
    }

    internal async Task<WorkerPoolHost> PoolAsync(string name, int workers, IShippedCode? code = null, Action<WorkerPoolOptions>? configure = null)
    {
        var options = new WorkerPoolOptions { Name = name, Workers = workers, NameServer = Host.Uri, PeerTimeout = PeerTimeout };
        configure?.Invoke(options);
        WorkerPoolHost pool = await WorkerPoolHost.StartAsync(options, code ?? new FakeShipping.Store(), CancellationToken.None);
        _owned.Add(pool);
        return pool;
    }

    internal async Task<CspNode> NodeAsync(string label, Action<CspNodeOptions>? configure = null)
    {
        var options = new CspNodeOptions { NameServer = Host.Uri, PeerTimeout = PeerTimeout, ProgramLabel = label };
        configure?.Invoke(options);
        CspNode node = await CspNode.StartAsync(options);
        _owned.Add(node);
        return node;
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
