using System.Net;
using CspNet.NameServer;

namespace CspNet.Remote.Tests.Named;

/// <summary>The cluster key: exposed endpoints require it, and callers without it are refused.</summary>
public sealed class ClusterKeyTests
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
        await using NameServerHost nameServer = await NameServerHost.StartAsync(hostOptions);
        CspNodeOptions Keyed(string? key) => new() { NameServer = nameServer.Uri, ClusterKey = key, NameServerTimeout = TimeSpan.FromSeconds(2) };

        await using CspNode host = await CspNode.StartAsync(Keyed("s3cret"));
        await using CspNode user = await CspNode.StartAsync(Keyed("s3cret"));
        AltingChannelIn<int> input = await host.GetOne2OneInAsync<int>("guarded");
        IChannelOut<int> output = await user.GetOne2OneOutAsync<int>("guarded");
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
}
