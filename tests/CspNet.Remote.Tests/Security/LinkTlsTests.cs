using System.Security.Cryptography.X509Certificates;
using CspNet.NameServer;
using CspNet.Remote.Tests.NameServer;

namespace CspNet.Remote.Tests.Security;

/// <summary>
/// Links between programs over mutual TLS with the cluster's certificates: values flow between
/// programs of one authority, and a program that cannot show one (another authority, another
/// address, a certificate not for client use) gets no value in and no value out.
/// </summary>
public sealed class LinkTlsTests(TestRegistryFixture registry) : IClassFixture<TestRegistryFixture>, IDisposable
{
    private const int Timeout = 60_000;
    private readonly ClusterCertificates _cluster = new();

    public void Dispose() => _cluster.Dispose();

    [Fact(Timeout = Timeout)]
    public async Task Link_BothProgramsWithTheClustersCertificates_ValuesFlowAndPlainTextIsRefused()
    {
        await using NameServerHost nameServer = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        await using CspNode home = await CspNode.StartAsync(Options(nameServer, _cluster.Issue(["127.0.0.1"])));
        await using CspNode user = await CspNode.StartAsync(Options(nameServer, _cluster.Issue(["127.0.0.1"])));

        AltingChannelIn<int> input = await home.GetOne2OneInAsync<int>("sealed");
        AltingChannelOut<int> output = await user.GetOne2OneOutAsync<int>("sealed");
        Task write = output.WriteAsync(42).AsTask();
        Assert.Equal(42, await input.ReadAsync());
        await write;

        // The endpoint speaks TLS only: a client in clear (h2c) gets no answer.
        using var plain = Grpc.Net.Client.GrpcChannel.ForAddress($"http://127.0.0.1:{home.Port}");
        var client = new CspNet.Remote.Protocol.Link.LinkClient(plain);
        using var call = client.Connect();
        await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            await call.RequestStream.WriteAsync(new CspNet.Remote.Protocol.ClientFrame { Hello = new CspNet.Remote.Protocol.Hello { ProtocolVersion = 1 } });
            await call.ResponseStream.MoveNext(CancellationToken.None);
        });
    }

    [Fact(Timeout = Timeout)]
    public async Task Link_WriterWithAnotherAuthority_RefusedAndNothingArrives()
    {
        using var stranger = new ClusterCertificates("Another cluster");
        await using NameServerHost nameServer = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        await using CspNode home = await CspNode.StartAsync(Options(nameServer, _cluster.Issue(["127.0.0.1"])));
        await using CspNode impostor = await CspNode.StartAsync(Options(nameServer, stranger.Issue(["127.0.0.1"]), stranger));

        await AssertRefusedAsync(home, impostor);
    }

    [Fact(Timeout = Timeout)]
    public async Task Link_HomeCertificateForAnotherAddress_WriterRefusesIt()
    {
        await using NameServerHost nameServer = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });

        // The home's certificate is the cluster's, but for another machine: whoever answers at
        // 127.0.0.1 with it is not the program the writer means to reach.
        await using CspNode home = await CspNode.StartAsync(Options(nameServer, _cluster.Issue(["10.9.9.9", "elsewhere.example"])));
        await using CspNode writer = await CspNode.StartAsync(Options(nameServer, _cluster.Issue(["127.0.0.1"])));

        await AssertRefusedAsync(home, writer);
    }

    [Fact(Timeout = Timeout)]
    public async Task Link_WriterPresentsAServerOnlyCertificate_Refused()
    {
        await using NameServerHost nameServer = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        await using CspNode home = await CspNode.StartAsync(Options(nameServer, _cluster.Issue(["127.0.0.1"])));
        await using CspNode writer = await CspNode.StartAsync(Options(nameServer, _cluster.Issue(["127.0.0.1"], server: true, client: false)));

        await AssertRefusedAsync(home, writer);
    }

    [Fact(Timeout = Timeout)]
    public async Task StartAsync_NonLoopbackAddressWithKeyButNoCertificate_RefusedSayingWhatToSet()
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(async () => await CspNode.StartAsync(new CspNodeOptions { Address = "0.0.0.0", AdvertisedHost = "10.0.0.5", ClusterKey = "k" }));

        Assert.Contains("CspNodeOptions.Certificate", error.Message, StringComparison.Ordinal);
        Assert.Contains("in clear", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task StartAsync_ClusterKeyToANameServerInClearOnAnotherHost_Refused()
    {
        var error = await Assert.ThrowsAsync<ArgumentException>(async () => await CspNode.StartAsync(new CspNodeOptions { NameServer = new Uri("http://10.0.0.1:9090"), ClusterKey = "k" }));

        Assert.Contains("https://", error.Message, StringComparison.Ordinal);
    }

    private CspNodeOptions Options(NameServerHost nameServer, X509Certificate2 certificate, ClusterCertificates? authority = null) => new()
    {
        NameServer = nameServer.Uri,
        Certificate = certificate,
        TrustedCertificate = (authority ?? _cluster).PublicAuthority,
        PeerTimeout = TimeSpan.FromSeconds(3),
        NameServerTimeout = TimeSpan.FromSeconds(3),
    };

    /// <summary>The writer's program cannot reach the home's channel, and the home's reader gets nothing.</summary>
    private static async Task AssertRefusedAsync(CspNode home, CspNode writer)
    {
        AltingChannelIn<int> input = await home.GetOne2OneInAsync<int>("sealed");
        await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            AltingChannelOut<int> output = await writer.GetOne2OneOutAsync<int>("sealed");
            await output.WriteAsync(13);
        });

        Assert.False(await ReadsWithinAsync(input, TimeSpan.FromMilliseconds(300)));
    }

    private static async Task<bool> ReadsWithinAsync(AltingChannelIn<int> input, TimeSpan wait)
    {
        using var cancel = new CancellationTokenSource(wait);
        try
        {
            await input.ReadAsync(cancel.Token);
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }
}
