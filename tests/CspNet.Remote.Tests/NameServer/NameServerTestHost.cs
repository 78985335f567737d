using CspNet.NameServer;
using Grpc.Net.Client;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>A NameServer on 127.0.0.1 (its table in memory, or in the etcd given) and a raw protocol client to it; disposing stops both.</summary>
internal sealed class NameServerTestHost : IAsyncDisposable
{
    private NameServerTestHost(NameServerHost host)
    {
        Host = host;
        Channel = UserKey.Channel(host.Uri);
        Client = new Proto.NameServer.NameServerClient(Channel);
    }

    public NameServerHost Host { get; }

    public GrpcChannel Channel { get; }

    public Proto.NameServer.NameServerClient Client { get; }

    public static async Task<NameServerTestHost> StartAsync(int port = 0, Action<NameServerOptions>? configure = null, EtcdProcess? etcd = null)
    {
        var options = new NameServerHostOptions { Port = port };
        configure?.Invoke(options.NameServer);
        if (etcd is not null)
        {
            options.UseEtcd(etcd);
        }

        return new NameServerTestHost(await NameServerHost.StartAsync(options));
    }

    public static Proto.NameEntry Channel32(string name) => new() { Name = name, Kind = "One2One", ValueType = "int32" };

    public async Task<string> OpenLeaseAsync(string program = "test", int port = 7000)
    {
        var reply = await Client.OpenLeaseAsync(new Proto.OpenLeaseRequest { Endpoint = new Proto.Endpoint { Host = "127.0.0.1", Port = port }, Program = program });
        return reply.LeaseId;
    }

    public async ValueTask DisposeAsync()
    {
        Channel.Dispose();
        await Host.DisposeAsync();
    }
}
