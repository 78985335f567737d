using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The raw TCP baseline: one loopback connection (both sockets with <see cref="Socket.NoDelay"/>)
/// between a client and a server loop in this process. A value travels as a 5-byte header (its
/// length, little-endian int32, then 1 if the server must answer) and its bytes; the server reads
/// each value into a new array, as the other two receivers materialize theirs, and answers one
/// byte when asked.
/// </summary>
internal sealed class RawTcp : IAsyncDisposable
{
    private const int HeaderSize = 5;

    private readonly Socket _listener;
    private readonly Socket _client;
    private readonly Socket _server;
    private readonly Task _serving;
    private readonly byte[] _header = new byte[HeaderSize];
    private readonly byte[] _reply = new byte[1];
    private readonly ArraySegment<byte>[] _segments = new ArraySegment<byte>[2];

    private RawTcp(Socket listener, Socket client, Socket server)
    {
        _listener = listener;
        _client = client;
        _server = server;
        _segments[0] = new ArraySegment<byte>(_header);
        _serving = Task.Run(() => ServeAsync(server));
    }

    internal static async Task<RawTcp> StartAsync()
    {
        var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            listener.Listen(1);
            Task<Socket> accepting = listener.AcceptAsync();
            await client.ConnectAsync(listener.LocalEndPoint!);
            Socket server = await accepting;
            server.NoDelay = true;
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
        await _serving;
        _client.Dispose();
        _server.Dispose();
        _listener.Dispose();
    }

    private static async Task ServeAsync(Socket socket)
    {
        var header = new byte[HeaderSize];
        byte[] reply = [1];
        while (await ReceiveExactlyAsync(socket, header))
        {
            var value = new byte[BinaryPrimitives.ReadInt32LittleEndian(header)];
            if (!await ReceiveExactlyAsync(socket, value))
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
