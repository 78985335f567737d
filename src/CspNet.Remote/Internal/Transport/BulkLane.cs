using System;
using System.Buffers.Binary;
using System.IO;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// The client's end of a bulk lane: a Unix domain socket beside the Link stream that carries the
/// bytes of large plain writes, so they do not cross HTTP/2's 16 KiB DATA frames.
/// </summary>
/// <remarks>
/// The wire: the link's secret (<see cref="SecretBytes"/> bytes, from the home's Hello), then per
/// value a header (op_id, little-endian uint64; length, little-endian uint32) and the bytes. The
/// lane carries only bytes: every answer comes on the link, one per operation. Payloads go out one
/// at a time, in the order sent, from one writer. A lane that fails once stays failed: the payloads
/// queued on it, and every later value, are the link's (the home answers ABORTED for a payload it
/// did not get, and the writer sends the value again on the link).
/// </remarks>
internal sealed class BulkLane : IAsyncDisposable
{
    /// <summary>The length of a lane's secret.</summary>
    internal const int SecretBytes = 32;

    /// <summary>op_id (8 bytes) and length (4 bytes) before each payload.</summary>
    internal const int HeaderBytes = 12;

    private readonly Socket _socket;
    private readonly Channel<(ulong OpId, ReadOnlyMemory<byte> Bytes)> _queue = Channel.CreateUnbounded<(ulong, ReadOnlyMemory<byte>)>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Task _writer;
    private volatile bool _failed;

    private BulkLane(Socket socket)
    {
        _socket = socket;
        _writer = WriteLoopAsync();
    }

    /// <summary>False once the lane failed: the caller sends on the link.</summary>
    internal bool IsUsable => !_failed;

    /// <summary>Opens the lane a home offered; null when it cannot be reached (the link alone is used).</summary>
    internal static async Task<BulkLane?> ConnectAsync(string path, ReadOnlyMemory<byte> secret, TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (secret.Length != SecretBytes || string.IsNullOrEmpty(path) || !File.Exists(path))
        {
            // Another host's socket path does not exist here: the lane is for programs on one host.
            return null;
        }

        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            deadline.CancelAfter(timeout);
            await socket.ConnectAsync(new UnixDomainSocketEndPoint(path), deadline.Token).ConfigureAwait(false);
            socket.SendBufferSize = 4 << 20;
            await socket.SendAsync(secret, SocketFlags.None, deadline.Token).ConfigureAwait(false);
            return new BulkLane(socket);
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or IOException)
        {
            socket.Dispose();
            return null;
        }
    }

    /// <summary>
    /// Queues a value's bytes for op <paramref name="opId"/>; false if the lane has failed. The bytes
    /// must stay untouched until the home has answered the operation.
    /// </summary>
    internal bool TrySend(ulong opId, ReadOnlyMemory<byte> bytes) => !_failed && _queue.Writer.TryWrite((opId, bytes));

    private async Task WriteLoopAsync()
    {
        byte[] header = new byte[HeaderBytes];
        try
        {
            ChannelReader<(ulong OpId, ReadOnlyMemory<byte> Bytes)> reader = _queue.Reader;
            while (await reader.WaitToReadAsync().ConfigureAwait(false))
            {
                while (reader.TryRead(out (ulong OpId, ReadOnlyMemory<byte> Bytes) item))
                {
                    BinaryPrimitives.WriteUInt64LittleEndian(header, item.OpId);
                    BinaryPrimitives.WriteUInt32LittleEndian(header.AsSpan(8), (uint)item.Bytes.Length);
                    await SendAllAsync(header).ConfigureAwait(false);
                    await SendAllAsync(item.Bytes).ConfigureAwait(false);
                }
            }
        }
#pragma warning disable CA1031 // Any failure ends the lane; the home answers ABORTED for what it missed.
        catch (Exception)
#pragma warning restore CA1031
        {
            _failed = true;
            _queue.Writer.TryComplete();
            _socket.Dispose();
        }
    }

    private async Task SendAllAsync(ReadOnlyMemory<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            int sent = await _socket.SendAsync(bytes, SocketFlags.None).ConfigureAwait(false);
            bytes = bytes[sent..];
        }
    }

    /// <summary>Breaks the lane at once (the link's values are not affected); for tests of the fallback.</summary>
    internal void Break()
    {
        _failed = true;
        _socket.Dispose();
    }

    public async ValueTask DisposeAsync()
    {
        _failed = true;
        _queue.Writer.TryComplete();
        _socket.Dispose();
        await _writer.ConfigureAwait(false);
    }
}
