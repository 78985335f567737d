using System.Net;
using CspNet.NameServer;
using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.NameServer;

namespace CspNet.Remote.Tests.Named;

/// <summary>The cluster key: exposed endpoints require it, and callers without it are refused.</summary>
public sealed class ClusterKeyTests(TestRegistryFixture registry) : IClassFixture<TestRegistryFixture>
{
    private const int Timeout = 30_000;

    [Fact(Timeout = Timeout)]
    public async Task StartAsync_NonLoopbackAddressWithoutKey_RefusedBeforeListening()
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(async () => await CspNode.StartAsync(new CspNodeOptions { Address = "0.0.0.0", AdvertisedHost = "127.0.0.1" }));
        Assert.Contains("ClusterKey", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task NameServerHost_NonLoopbackAddressWithoutKey_RefusedBeforeListening()
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(async () => await NameServerHost.StartAsync(new NameServerHostOptions { Address = IPAddress.Any }));
        Assert.Contains("ClusterKey", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task NodesWithTheKey_KeyedNameServerAndLinks_CommunicateWhileStrangersAreRefused()
    {
        var hostOptions = new NameServerHostOptions { Port = 0 };
        hostOptions.NameServer.ClusterKey = "s3cret";
        await using NameServerHost nameServer = await registry.StartNameServerAsync(hostOptions);
        CspNodeOptions Keyed(string? key) => new() { NameServer = nameServer.Uri, ClusterKey = key, NameServerTimeout = TimeSpan.FromSeconds(2) };

        await using CspNode host = await CspNode.StartAsync(Keyed("s3cret"));
        await using CspNode user = await CspNode.StartAsync(Keyed("s3cret"));
        AltingChannelIn<int> input = await host.GetOne2OneInAsync<int>("guarded");
        AltingChannelOut<int> output = await user.GetOne2OneOutAsync<int>("guarded");
        Task write = output.WriteAsync(9).AsTask();
        Assert.Equal(9, await input.ReadAsync());
        await write;

        // A program without the key cannot even join: the NameServer refuses it.
        await Assert.ThrowsAnyAsync<Exception>(async () => await CspNode.StartAsync(Keyed(null)));

        // A stranger that dials the host's endpoint directly is refused too.
        using var channel = Grpc.Net.Client.GrpcChannel.ForAddress($"http://127.0.0.1:{host.Port}");
        var client = new CspNet.Remote.Protocol.Link.LinkClient(channel);
        using var call = client.Connect();
        // The refusal may end the call before, while or after the first frame is written; a write
        // cut short by it fails with whatever the client saw (under load: Cancelled), so the
        // response, which carries the server's status, is what says why.
        try
        {
            await call.RequestStream.WriteAsync(new CspNet.Remote.Protocol.ClientFrame { Hello = new CspNet.Remote.Protocol.Hello { ProtocolVersion = 1 } });
        }
        catch (Grpc.Core.RpcException)
        {
        }

        var refused = await Assert.ThrowsAsync<Grpc.Core.RpcException>(async () => await call.ResponseStream.MoveNext(CancellationToken.None));
        Assert.Equal(Grpc.Core.StatusCode.Unauthenticated, refused.StatusCode);
    }

    [Fact(Timeout = Timeout)]
    public async Task StartAsync_NonLoopbackAddressWithKeyButNoCertificate_RefusedBeforeListening()
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(async () => await CspNode.StartAsync(new CspNodeOptions { Address = "0.0.0.0", AdvertisedHost = "127.0.0.1", ClusterKey = "s3cret" }));
        Assert.Contains("CspNodeOptions.Certificate", error.Message, StringComparison.Ordinal);
    }

    [NonLoopbackFact(Timeout = Timeout)]
    public async Task StartAsync_KeyAndNameServerOnAnotherMachineOverPlainHttp_RefusedWithoutConnecting()
    {
        using var listener = new System.Net.Sockets.TcpListener(TestNetwork.NonLoopbackAddress()!, 0);
        listener.Start();
        var nameServer = new Uri($"http://{listener.LocalEndpoint}");

        var error = await Assert.ThrowsAsync<ArgumentException>(async () => await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer, ClusterKey = "s3cret" }));

        Assert.Contains("clear text", error.Message, StringComparison.Ordinal);
        Assert.False(listener.Pending(), "The program connected to send its cluster key in clear text.");
    }

    [NonLoopbackFact(Timeout = Timeout)]
    public async Task GetOne2OneOut_KeyAndHomeOnAnotherMachineOverPlainHttp_RefusedWithoutConnecting()
    {
        using var listener = new System.Net.Sockets.TcpListener(TestNetwork.NonLoopbackAddress()!, 0);
        listener.Start();
        var home = (IPEndPoint)listener.LocalEndpoint;
        var hostOptions = new NameServerHostOptions { Port = 0 };
        hostOptions.NameServer.ClusterKey = "s3cret";
        await using NameServerHost nameServer = await registry.StartNameServerAsync(hostOptions);
        NameLease lease = await nameServer.Registry.OpenLeaseAsync(new LinkEndpoint(home.Address.ToString(), home.Port), "elsewhere");
        await nameServer.Registry.RegisterAsync(lease.Id, new NameEntry { Name = "far", Kind = NameKind.One2One, ValueType = "int32", Endpoint = new LinkEndpoint(home.Address.ToString(), home.Port) }, returnExisting: false);
        await using CspNode user = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, ClusterKey = "s3cret" });

        var error = await Assert.ThrowsAnyAsync<Exception>(async () => await user.GetOne2OneOutAsync<int>("far"));

        Assert.Contains("clear text", error.ToString(), StringComparison.Ordinal);
        Assert.False(listener.Pending(), "The program connected to send its cluster key in clear text.");
    }

    [Fact(Timeout = Timeout)]
    public async Task NodesWithClusterCertificates_LinksOverTls_Communicate()
    {
        using System.Security.Cryptography.X509Certificates.X509Certificate2 authority = TestCertificates.SelfSigned("CN=cspnet cluster", isAuthority: true);
        using System.Security.Cryptography.X509Certificates.X509Certificate2 first = TestCertificates.IssuedBy(authority, "CN=first", TestCertificates.ServerUse, alsoFor: TestCertificates.ClientUse);
        using System.Security.Cryptography.X509Certificates.X509Certificate2 second = TestCertificates.IssuedBy(authority, "CN=second", TestCertificates.ServerUse, alsoFor: TestCertificates.ClientUse);
        var hostOptions = new NameServerHostOptions { Port = 0 };
        hostOptions.NameServer.ClusterKey = "s3cret";
        await using NameServerHost nameServer = await registry.StartNameServerAsync(hostOptions);
        CspNodeOptions Tls(System.Security.Cryptography.X509Certificates.X509Certificate2 mine) =>
            new() { NameServer = nameServer.Uri, ClusterKey = "s3cret", Certificate = mine, TrustedCertificate = authority };

        await using CspNode host = await CspNode.StartAsync(Tls(first));
        await using CspNode user = await CspNode.StartAsync(Tls(second));
        AltingChannelIn<int> input = await host.GetOne2OneInAsync<int>("over-tls");
        AltingChannelOut<int> output = await user.GetOne2OneOutAsync<int>("over-tls");
        Task write = output.WriteAsync(7).AsTask();

        Assert.Equal(7, await input.ReadAsync());
        await write;

        // The host's endpoint speaks TLS only: a plain HTTP/2 caller gets no answer at all.
        using var plain = Grpc.Net.Client.GrpcChannel.ForAddress($"http://127.0.0.1:{host.Port}");
        await Assert.ThrowsAsync<Grpc.Core.RpcException>(async () =>
        {
            using var call = new CspNet.Remote.Protocol.Link.LinkClient(plain).Connect(new Grpc.Core.Metadata { { "x-cspnet-cluster-key", "s3cret" } });
            await call.ResponseStream.MoveNext(CancellationToken.None);
        });
    }
}
