using System.Net;
using System.Net.Sockets;
using CspNet.NameServer;
using CspNet.Remote.Tests.NameServer;
using CspNet.Remote.Workers;

namespace CspNet.Remote.Tests.Security;

/// <summary>A program's endpoint, a pool and a NameServer hold at most their MaxConnections: one beyond is closed at once.</summary>
public sealed class ConnectionLimitTests(TestRegistryFixture registry) : IClassFixture<TestRegistryFixture>
{
    private const int Timeout = 30_000;

    [Fact(Timeout = Timeout)]
    public async Task MaxConnections_OneConnectionBeyondTheNodes_IsClosed()
    {
        await using NameServerHost nameServer = await registry.StartNameServerAsync();
        await using CspNode node = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, MaxConnections = 1 });

        Assert.True(await OneOfTwoConnectionsIsClosedAsync(node.Port));
    }

    [Fact(Timeout = Timeout)]
    public async Task MaxConnections_OneConnectionBeyondThePools_IsClosed()
    {
        await using NameServerHost nameServer = await registry.StartNameServerAsync();
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(new WorkerPoolOptions { NameServer = nameServer.Uri, Workers = 1, MaxConnections = 1 });

        Assert.True(await OneOfTwoConnectionsIsClosedAsync(pool.Uri.Port));
    }

    [Fact(Timeout = Timeout)]
    public async Task MaxConnections_OneConnectionBeyondTheNameServers_IsClosed()
    {
        var options = new NameServerHostOptions();
        options.NameServer.MaxConnections = 1;
        await using NameServerHost nameServer = await registry.StartNameServerAsync(options);

        Assert.True(await OneOfTwoConnectionsIsClosedAsync(nameServer.Port));
    }

    [Fact]
    public void MaxConnections_Zero_Refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new WorkerPoolOptions { MaxConnections = 0 }.Validate());
        Assert.Throws<ArgumentOutOfRangeException>(() => new NameServerOptions { MaxConnections = 0 }.Validate());
        Assert.Throws<ArgumentOutOfRangeException>(() => new CspNodeOptions { MaxBytesPerLink = 0 }.Validated());
    }

    // Two idle connections to a server that takes one: the server closes the other within the
    // test's time (an accepted idle HTTP/2 connection is kept far longer).
    private static async Task<bool> OneOfTwoConnectionsIsClosedAsync(int port)
    {
        using var first = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        using var second = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await first.ConnectAsync(IPAddress.Loopback, port);
        await second.ConnectAsync(IPAddress.Loopback, port);
        Task<bool> closed = await Task.WhenAny(ClosedAsync(first), ClosedAsync(second));
        return await closed;
    }

    private static async Task<bool> ClosedAsync(Socket socket)
    {
        byte[] buffer = new byte[64];
        try
        {
            // Kestrel writes nothing before the client's preface: any read that ends is the close.
            while (await socket.ReceiveAsync(buffer) > 0)
            {
            }
        }
        catch (SocketException)
        {
            // Reset: closed as well.
        }

        return true;
    }
}
