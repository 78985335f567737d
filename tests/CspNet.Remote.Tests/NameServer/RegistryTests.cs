using CspNet.NameServer;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// The base of a test class that runs against each registry: its in-memory class passes no etcd,
/// its etcd class (marked <see cref="RequiresEtcdAttribute"/>) the one etcd of its class fixture.
/// </summary>
public abstract class RegistryTests
{
    private readonly EtcdFixture? _etcd;

    /// <param name="etcd">The class's etcd, or <see langword="null"/> for the in-memory registry.</param>
    protected RegistryTests(EtcdFixture? etcd) => _etcd = etcd;

    /// <summary>Whether the NameServers of this class keep their table in etcd.</summary>
    private protected bool OnEtcd => _etcd is not null;

    /// <summary>Starts a NameServer with a new, empty table of the registry under test (on etcd, a prefix no other host uses).</summary>
    private protected async Task<NameServerHost> StartHostAsync(NameServerHostOptions? options = null)
    {
        options ??= new NameServerHostOptions();
        return await NameServerHost.StartAsync(_etcd is null ? options : options.UseEtcd(await _etcd.GetAsync()));
    }

    /// <summary>As <see cref="StartHostAsync"/>, with a raw protocol client to the host.</summary>
    private protected async Task<NameServerTestHost> StartTestHostAsync(Action<NameServerOptions>? configure = null) =>
        await NameServerTestHost.StartAsync(configure: configure, etcd: _etcd is null ? null : await _etcd.GetAsync());
}
