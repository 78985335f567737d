using System.Net.Sockets;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Tests.Named;
using CspNet.Remote.Tests.Security;
using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Lane;

/// <summary>
/// The lane's listeners: their bounds (a cap on connections over both, the secret within the peer
/// timeout), the TLS port that speaks no clear text, and the node's stop, which leaves no
/// connection, socket file or directory behind.
/// </summary>
public sealed class LaneConnectionTests : IDisposable
{
    private readonly ClusterCertificates _cluster = new();

    public void Dispose() => _cluster.Dispose();

    [LaneFact(Timeout = 60_000)]
    public async Task LaneListeners_ConnectionCapReached_NewConnectionClosedAndTheLaneInUseGoesOn()
    {
        // Three connections at most, over both listeners: the lane in use (Unix socket) and two (TCP)
        // that have not said their secret yet.
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => { o.MaxConnections = 3; o.PeerTimeout = TimeSpan.FromSeconds(30); });
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("capped");
        await using var first = await BulkLaneTests.RawClient.StartAsync(home, offerLane: true);
        await first.AttachWriterAsync("capped");
        await using var second = await BulkLaneTests.RawClient.StartAsync(home, offerLane: true);
        await second.AttachWriterAsync("capped");
        using Socket inUse = await first.OpenLaneAsync(first.Hello.LaneSecret.Memory);
        using Socket quiet = await second.OpenTcpLaneAsync(ReadOnlyMemory<byte>.Empty);
        using Socket quieter = await second.OpenTcpLaneAsync(ReadOnlyMemory<byte>.Empty);

        // With its live secret, this lane would be kept open: it is closed because the cap is reached.
        using (var overCap = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified))
        {
            await overCap.ConnectAsync(new UnixDomainSocketEndPoint(second.Hello.LanePath));
            try
            {
                await overCap.SendAsync(second.Hello.LaneSecret.Memory);
            }
            catch (SocketException e) when (e.SocketErrorCode is SocketError.Shutdown or SocketError.ConnectionReset)
            {
                // Closed before the secret could even be sent: the cap at work, as asserted next.
            }

            await BulkLaneTests.RawClient.ClosedByTheHomeAsync(overCap);
        }

        byte[] encoded = [1, .. Enumerable.Repeat((byte)9, 40_000)];
        await inUse.SendAsync(BulkLaneTests.Header(opId: 1, length: (uint)encoded.Length));
        await inUse.SendAsync(encoded);
        await first.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Lane = true } });
        Assert.Equal(encoded.AsSpan(1).ToArray(), await input.ReadAsync());
        Assert.Equal(Proto.Outcome.Ok, (await first.CompletedAsync()).Outcome);
    }

    [LaneTheory(Timeout = 60_000)]
    [InlineData(false, 0)]
    [InlineData(false, 10)]
    [InlineData(true, 0)]
    public async Task LaneListeners_SecretNotSentWithinPeerTimeout_ConnectionClosed(bool overTcp, int partOfASecret)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        await using var client = await BulkLaneTests.RawClient.StartAsync(home, offerLane: true);
        byte[] part = client.Hello.LaneSecret.Memory[..partOfASecret].ToArray();

        using Socket lane = overTcp ? await client.OpenTcpLaneAsync(part) : await client.OpenLaneAsync(part);

        await BulkLaneTests.RawClient.ClosedByTheHomeAsync(lane); // the test's timeout fails it if the home waits for ever
    }

    [LaneFact(Timeout = 60_000)]
    public async Task TlsLane_ClearTextConnection_ClosedAndTheLinkAndItsLaneGoOn()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host", Sealed);
        CspNode user = await system.NodeAsync("user", o => { Sealed(o); o.LaneOverUnixSocket = false; });
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync<byte[]>("clear-text");
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("clear-text");

        using (var plain = new Socket(SocketType.Stream, ProtocolType.Tcp))
        {
            await plain.ConnectAsync("127.0.0.1", host.Lanes!.TcpPort);
            await plain.SendAsync(new byte[BulkLane.SecretBytes + BulkLane.HeaderBytes]);
            await BulkLaneTests.RawClient.ClosedByTheHomeAsync(plain);
        }

        byte[] value = new byte[1 << 20];
        new Random(23).NextBytes(value);
        Task write = output.WriteAsync(value).AsTask();
        Assert.Equal(value, await input.ReadAsync());
        await write;
        Assert.Equal(LaneKind.Tls, ((RemoteChannelOut<byte[]>)output).Link.LaneKind);
        Assert.True(((RemoteChannelOut<byte[]>)output).Link.HasLane);
        Assert.Equal(1, ((BulkLaneHost)host.Lanes!).BytesValuesReceived); // on the TLS lane, not the link
    }

    [LaneFact(Timeout = 60_000)]
    public async Task DisposeAsync_NodeWithLaneConnectionsOpen_ClosesThemAndLeavesNoSocketOrDirectory()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => o.PeerTimeout = TimeSpan.FromSeconds(30));
        await home.GetAny2OneInAsync<byte[]>("stopping");
        var client = await BulkLaneTests.RawClient.StartAsync(home, offerLane: true);
        await client.AttachWriterAsync("stopping");
        string directory = Path.GetDirectoryName(home.Lanes!.SocketPath)!;
        using Socket attached = await client.OpenLaneAsync(client.Hello.LaneSecret.Memory);
        using Socket waitingForItsSecret = await client.OpenTcpLaneAsync(ReadOnlyMemory<byte>.Empty);
        await attached.SendAsync(BulkLaneTests.Header(opId: 1, length: 100)); // a payload begun, never finished

        await home.DisposeAsync();

        await BulkLaneTests.RawClient.ClosedByTheHomeAsync(attached);
        await BulkLaneTests.RawClient.ClosedByTheHomeAsync(waitingForItsSecret);
        Assert.False(Directory.Exists(directory));
        Assert.False(File.Exists(client.Hello.LanePath));
        try
        {
            await client.DisposeAsync();
        }
        catch (Exception e) when (e is RpcException or InvalidOperationException)
        {
            // The home is gone: its stream ended with it.
        }
    }

    private void Sealed(CspNodeOptions options)
    {
        options.Certificate = _cluster.Issue(["127.0.0.1"]);
        options.TrustedCertificate = _cluster.PublicAuthority;
    }
}
