using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The raw TCP baseline, the program a competent engineer writes: one loopback connection (both
/// sockets with <see cref="Socket.NoDelay"/> and 4 MiB kernel buffers) between a client and a
/// server loop, in this process or (<see cref="ConnectAsync"/>, <see cref="ServeAsync"/>) in
/// another; or the same over a Unix domain socket (<see cref="NewUnixSocket"/>), the transport the
/// bulk lane takes between programs on one host. A value travels as a 5-byte header (its length, little-endian int32, then 1 if the
/// server must answer) and its bytes; the server reads every value into one receive buffer it
/// reuses (grown to the largest value seen) and answers one byte when asked.
/// </summary>
internal sealed class RawTcp : IAsyncDisposable
{
    private const int HeaderSize = 5;

    // Large enough for a 4 MB value in flight without the sender waiting on window updates.
    internal const int SocketBufferSize = 4 << 20;

    private readonly Socket? _listener;
    private readonly Socket _client;
    private readonly Socket? _server;
    private readonly Task? _serving;
    private readonly byte[] _header = new byte[HeaderSize];
    private readonly byte[] _reply = new byte[1];
    private readonly ArraySegment<byte>[] _segments = new ArraySegment<byte>[2];

    private RawTcp(Socket? listener, Socket client, Socket? server)
    {
        _listener = listener;
        _client = client;
        _server = server;
        _segments[0] = new ArraySegment<byte>(_header);
        _serving = server is null ? null : Task.Run(() => ServeAsync(server));
    }

    /// <summary>A TCP socket as both ends use it: <see cref="Socket.NoDelay"/>, large kernel buffers.</summary>
    internal static Socket NewSocket() => new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp)
    {
        NoDelay = true,
        SendBufferSize = SocketBufferSize,
        ReceiveBufferSize = SocketBufferSize,
    };

    /// <summary>A Unix domain socket as both ends use it: large kernel buffers (no Nagle to turn off).</summary>
    internal static Socket NewUnixSocket() => new(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)
    {
        SendBufferSize = SocketBufferSize,
        ReceiveBufferSize = SocketBufferSize,
    };

    /// <summary>Connects a client to a server loop another program runs (<see cref="ServeAsync"/>), over TCP or a Unix domain socket.</summary>
    internal static async Task<RawTcp> ConnectAsync(EndPoint server)
    {
        Socket client = server is UnixDomainSocketEndPoint ? NewUnixSocket() : NewSocket();
        try
        {
            await client.ConnectAsync(server);
            return new RawTcp(null, client, null);
        }
        catch
        {
            client.Dispose();
            throw;
        }
    }

    /// <summary>Starts the server loop and connects a client to it, both in this process.</summary>
    internal static async Task<RawTcp> StartAsync()
    {
        Socket listener = NewSocket();
        Socket client = NewSocket();
        try
        {
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            listener.Listen(1);
            Task<Socket> accepting = listener.AcceptAsync();
            await client.ConnectAsync(listener.LocalEndPoint!);
            Socket server = await accepting;
            return new RawTcp(listener, client, server);
        }
        catch
        {
            client.Dispose();
            listener.Dispose();
            throw;
        }
    }

    /// <summary>Sends one value (header and bytes in one gathered send); the server answers if <paramref name="ack"/>.</summary>
    internal async Task SendAsync(byte[] value, bool ack)
    {
        BinaryPrimitives.WriteInt32LittleEndian(_header, value.Length);
        _header[4] = ack ? (byte)1 : (byte)0;
        _segments[1] = new ArraySegment<byte>(value);
        int sent = await _client.SendAsync(_segments, SocketFlags.None);
        if (sent != HeaderSize + value.Length)
        {
            throw new InvalidOperationException($"Sent {sent} of {HeaderSize + value.Length} bytes.");
        }
    }

    /// <summary>Waits for the server's one-byte answer.</summary>
    internal async Task ReceiveAckAsync()
    {
        if (!await ReceiveExactlyAsync(_client, _reply))
        {
            throw new InvalidOperationException("The raw TCP server closed the connection.");
        }
    }

    public async ValueTask DisposeAsync()
    {
        _client.Shutdown(SocketShutdown.Send);
        if (_serving is not null)
        {
            await _serving;
        }

        _client.Dispose();
        _server?.Dispose();
        _listener?.Dispose();
    }

    /// <summary>
    /// The server loop on an accepted connection (which inherits the listener's options): reads
    /// every value into one reused buffer, answers 1 byte when asked, ends when the client closes.
    /// </summary>
    internal static async Task ServeAsync(Socket socket)
    {
        var header = new byte[HeaderSize];
        byte[] reply = [1];
        byte[] buffer = [];
        while (await ReceiveExactlyAsync(socket, header))
        {
            int length = BinaryPrimitives.ReadInt32LittleEndian(header);
            if (length > buffer.Length)
            {
                buffer = new byte[length];
            }

            if (!await ReceiveExactlyAsync(socket, buffer.AsMemory(0, length)))
            {
                return;
            }

            if (header[4] != 0)
            {
                _ = await socket.SendAsync(reply, SocketFlags.None);
            }
        }
    }

    /// <summary>Fills <paramref name="buffer"/>; false if the peer closed the connection first.</summary>
    private static async ValueTask<bool> ReceiveExactlyAsync(Socket socket, Memory<byte> buffer)
    {
        while (buffer.Length > 0)
        {
            int received = await socket.ReceiveAsync(buffer, SocketFlags.None);
            if (received == 0)
            {
                return false;
            }

            buffer = buffer[received..];
        }

        return true;
    }
}
