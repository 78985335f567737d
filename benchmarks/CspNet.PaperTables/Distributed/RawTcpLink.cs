using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace CspNet.PaperTables.Distributed;

/// <summary>
/// The network baseline of the tables: length-prefixed messages over one TCP connection, as a
/// competent engineer writes them (NoDelay, 4 MiB socket buffers, one receive buffer reused).
/// </summary>
internal sealed class RawTcpLink : IAsyncDisposable
{
    private readonly Socket _socket;
    private readonly byte[] _header = new byte[4];
    private byte[] _buffer = new byte[64 << 10];

    private RawTcpLink(Socket socket) => _socket = socket;

    internal static Socket NewSocket()
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        socket.SendBufferSize = 4 << 20;
        socket.ReceiveBufferSize = 4 << 20;
        return socket;
    }

    internal static async Task<RawTcpLink> ConnectAsync(string address)
    {
        Socket socket = NewSocket();
        await socket.ConnectAsync(IPEndPoint.Parse(address));
        return new RawTcpLink(socket);
    }

    internal static RawTcpLink Accepted(Socket socket)
    {
        socket.NoDelay = true;
        socket.SendBufferSize = 4 << 20;
        socket.ReceiveBufferSize = 4 << 20;
        return new RawTcpLink(socket);
    }

    /// <summary>Sends one message: its length, then its bytes.</summary>
    internal async ValueTask SendAsync(ReadOnlyMemory<byte> message, CancellationToken cancellationToken = default)
    {
        BinaryPrimitives.WriteInt32LittleEndian(_header, message.Length);
        await _socket.SendAsync(_header, SocketFlags.None, cancellationToken);
        if (message.Length > 0)
        {
            await _socket.SendAsync(message, SocketFlags.None, cancellationToken);
        }
    }

    /// <summary>Receives one message into the reused buffer; the memory is valid until the next receive. Empty at the end of the stream.</summary>
    internal async ValueTask<ReadOnlyMemory<byte>?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        if (!await FillAsync(_header, cancellationToken))
        {
            return null;
        }

        int length = BinaryPrimitives.ReadInt32LittleEndian(_header);
        if (length > _buffer.Length)
        {
            _buffer = new byte[length];
        }

        Memory<byte> message = _buffer.AsMemory(0, length);
        return await FillAsync(message, cancellationToken) ? message : null;
    }

    private async ValueTask<bool> FillAsync(Memory<byte> target, CancellationToken cancellationToken)
    {
        int filled = 0;
        while (filled < target.Length)
        {
            int read = await _socket.ReceiveAsync(target[filled..], SocketFlags.None, cancellationToken);
            if (read == 0)
            {
                return false;
            }

            filled += read;
        }

        return true;
    }

    public ValueTask DisposeAsync()
    {
        _socket.Dispose();
        return ValueTask.CompletedTask;
    }
}
