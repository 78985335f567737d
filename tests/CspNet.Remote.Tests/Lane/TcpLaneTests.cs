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
/// The bulk lane over TCP, as programs on different hosts use it: played here on 127.0.0.1 by a
/// client told to leave the home's Unix domain socket alone. Values arrive intact and in order, in
/// clear text to loopback and inside TLS with the link's certificates; a lane cut mid-stream costs
/// no value and no duplicate; a connection without the secret, or in clear text to a TLS lane,
/// delivers nothing. Across real hosts: tests/CspNet.Remote.Tests/MultiHost/CrossHostLaneTests.
/// </summary>
public sealed class TcpLaneTests : IDisposable
{
    private readonly ClusterCertificates _cluster = new();

    public void Dispose() => _cluster.Dispose();

    [LaneFact(Timeout = 60_000)]
    public async Task Write_HomeReachedOverTcp_ValuesTravelOnTheTcpLaneIntactAndInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user", o => o.LaneOverUnixSocket = false);
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync<byte[]>("tcp-values");
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("tcp-values");

        await WriteAndReadAsync(output, input);

        Assert.Equal(LaneKind.Tcp, ((RemoteChannelOut<byte[]>)output).Link.LaneKind);
        Assert.True(((RemoteChannelOut<byte[]>)output).Link.HasLane);
    }

    [LaneFact(Timeout = 60_000)]
    public async Task Write_LinkOverTls_TcpLaneIsSealedWithTheLinksCertificatesAndValuesArriveIntact()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host", Sealed);
        CspNode user = await system.NodeAsync("user", o => { Sealed(o); o.LaneOverUnixSocket = false; });
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync<byte[]>("tls-values");
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("tls-values");

        await WriteAndReadAsync(output, input);

        Assert.Equal(LaneKind.Tls, ((RemoteChannelOut<byte[]>)output).Link.LaneKind);
        Assert.True(((RemoteChannelOut<byte[]>)output).Link.HasLane);
    }

    [LaneTheory(Timeout = 60_000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Write_TlsLaneValuesAroundOneRecord_EachArrivesIntactInOrder(bool buffered)
    {
        // The header shares the first TLS record with the payload's first bytes: values that fit in
        // that record, fill it exactly, or spill past it by a byte all come out whole. Unbuffered,
        // each write sends the value from its own array, after the header and the presence byte.
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host", Sealed);
        CspNode user = await system.NodeAsync("user", o => { Sealed(o); o.LaneOverUnixSocket = false; o.BulkLaneThreshold = 1024; });
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync("tls-record", buffered ? new FifoBuffer<byte[]>(4) : null);
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("tls-record");
        const int Record = 16 << 10;
        int[] sizes = [1024, Record - 13 - 1, Record - 13, Record - 12 - 2, Record - 12 - 1, Record - 12, Record, Record + 1, (2 * Record) - 12, 100_000];
        var random = new Random(17);
        byte[][] values = [.. sizes.Select(size => { byte[] value = new byte[size]; random.NextBytes(value); return value; })];

        Task writing = Task.Run(async () =>
        {
            foreach (byte[] value in values)
            {
                await output.WriteAsync(value);
            }
        });
        foreach (byte[] value in values)
        {
            Assert.Equal(value, await input.ReadAsync());
        }

        await writing;
        Assert.Equal(LaneKind.Tls, ((RemoteChannelOut<byte[]>)output).Link.LaneKind);
        Assert.True(((RemoteChannelOut<byte[]>)output).Link.HasLane);
        Assert.Equal(values.Length, ((BulkLaneHost)host.Lanes!).BytesValuesReceived); // each on the lane, received straight
        if (!buffered)
        {
            Assert.Equal(values.Length, ((RemoteChannelOut<byte[]>)output).Link.ArrayLaneWrites);
        }
    }

    [LaneFact(Timeout = 60_000)]
    public async Task Write_TcpLaneCutDuringBufferedStream_EveryValueArrivesOnceInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host", Sealed);
        CspNode user = await system.NodeAsync("user", o => { Sealed(o); o.LaneOverUnixSocket = false; });
        AltingChannelIn<byte[]> input = await host.GetOne2OneInAsync("tcp-cut", new FifoBuffer<byte[]>(8));
        AltingChannelOut<byte[]> output = await user.GetOne2OneOutAsync<byte[]>("tcp-cut");
        Assert.Equal(LaneKind.Tls, ((RemoteChannelOut<byte[]>)output).Link.LaneKind);

        // The buffer is full and credited values are on their way (one of them part-way) when the lane goes.
        Task writing = BulkLaneTests.WriteMixedStreamAsync(output, BulkLaneTests.MixedCount);
        await BulkLaneTests.ReadMixedStreamAsync(input, 0, BulkLaneTests.MixedCount / 3);
        await ((BulkLaneHost)host.Lanes!).DropConnectionsAsync();
        await BulkLaneTests.ReadMixedStreamAsync(input, BulkLaneTests.MixedCount / 3, BulkLaneTests.MixedCount);
        await writing;

        Assert.True(((RemoteChannelOut<byte[]>)output).Link.CreditedLaneWrites > 0, "No credited value went on the lane.");
        Assert.False(((RemoteChannelOut<byte[]>)output).Link.HasLane);
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing duplicated
    }

    [LaneFact(Timeout = 60_000)]
    public async Task RawTcpLane_StrangerWithoutTheSecret_RefusedAndNothingDelivered()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("tcp-guarded");
        await using var client = await BulkLaneTests.RawClient.StartAsync(home, offerLane: true);
        await client.AttachWriterAsync("tcp-guarded");
        Assert.NotEqual(0u, client.Hello.LanePort);

        byte[] guess = new byte[BulkLane.SecretBytes];
        new Random(2).NextBytes(guess);
        using (Socket stranger = await client.OpenTcpLaneAsync(guess))
        {
            try
            {
                await stranger.SendAsync(BulkLaneTests.Header(opId: 1, length: 3));
                await stranger.SendAsync(new byte[] { 1, 2, 3 });
                await BulkLaneTests.RawClient.AssertLaneClosedAsync(stranger); // closed without a word
            }
            catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.Shutdown or SocketError.ConnectionAborted || e.NativeErrorCode == 32)
            {
                // The home closed the connection at the wrong secret before these bytes went out
                // (broken pipe, reset): refused just the same.
            }
        }

        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Lane = true } });
        Proto.Completed answer = await client.CompletedAsync();
        Assert.Equal((Proto.Outcome.Error, StatusCode.Aborted), (answer.Outcome, (StatusCode)answer.Status));
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync()); // nothing delivered
    }

    [LaneFact(Timeout = 60_000)]
    public async Task TcpLane_HomeWithCertificates_SpeaksTlsWithTheLinksCertificateAndClosesClearText()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", Sealed);
        int port = home.Lanes!.TcpPort;

        // A program of the cluster completes the handshake: the home shows its certificate for the address dialled.
        using (var sealedLane = new TcpClient())
        {
            await sealedLane.ConnectAsync("127.0.0.1", port);
            await using var tls = new System.Net.Security.SslStream(sealedLane.GetStream());
            var authentication = Internal.Security.Certificates.ClientOptions(_cluster.PublicAuthority, _cluster.Issue(["127.0.0.1"]));
            authentication.TargetHost = "127.0.0.1";
            await tls.AuthenticateAsClientAsync(authentication);
            Assert.True(tls.IsAuthenticated);
        }

        // Clear text (a secret would travel readable) is not spoken: the home closes the connection.
        using var plain = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await plain.ConnectAsync("127.0.0.1", port);
        await plain.SendAsync(new byte[BulkLane.SecretBytes + 12]);
        await BulkLaneTests.RawClient.ClosedByTheHomeAsync(plain);
    }

    [LaneTheory(Timeout = 60_000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task TlsLane_ClientWithoutACertificateOfTheAuthority_ClosedAtTheHandshake(bool foreignCertificate)
    {
        // The home waits ten minutes for a secret: a connection that ends sooner was refused by the
        // handshake itself (mutual TLS, as on the link).
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => { Sealed(o); o.PeerTimeout = TimeSpan.FromMinutes(10); });
        using var stranger = new ClusterCertificates("another cluster");
        using var lane = new TcpClient();
        await lane.ConnectAsync("127.0.0.1", home.Lanes!.TcpPort);
        await using var tls = new System.Net.Security.SslStream(lane.GetStream());
        var authentication = Internal.Security.Certificates.ClientOptions(_cluster.PublicAuthority, foreignCertificate ? stranger.Issue(["127.0.0.1"]) : null);
        authentication.TargetHost = "127.0.0.1";

        try
        {
            await tls.AuthenticateAsClientAsync(authentication);
            Assert.Equal(0, await tls.ReadAsync(new byte[1])); // TLS 1.3: the home's refusal comes after the client's side is done
        }
        catch (Exception e) when (e is System.Security.Authentication.AuthenticationException or IOException)
        {
            // Refused during the handshake, or an alert in place of the first record: closed either way.
        }
    }

    private void Sealed(CspNodeOptions options)
    {
        options.Certificate = _cluster.Issue(["127.0.0.1"]);
        options.TrustedCertificate = _cluster.PublicAuthority;
    }

    private static async Task WriteAndReadAsync(AltingChannelOut<byte[]> output, AltingChannelIn<byte[]> input)
    {
        var random = new Random(13);
        foreach (int size in new[] { 32 << 10, 1 << 20, 10, 3 << 20, (32 << 10) - 1, 200_000 })
        {
            byte[] value = new byte[size];
            random.NextBytes(value);
            Task write = output.WriteAsync(value).AsTask();
            Assert.Equal(value, await input.ReadAsync());
            await write;
        }
    }
}
