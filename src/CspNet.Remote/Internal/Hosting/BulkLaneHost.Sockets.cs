using System;
using System.Buffers;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Transport;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>
/// The clear-text lanes (the Unix domain socket, and TCP when the link has no TLS) on sockets of the
/// lane's own: each connection's loop receives every payload's bytes from the kernel straight into
/// the array the value is read from, as a raw socket reader does. Through Kestrel the bytes crossed
/// a connection pipe first: one more copy of every byte, and a hand-off between Kestrel's receive
/// loop and the lane's reader.
/// </summary>
/// <remarks>
/// The TLS lane stays on Kestrel (its HTTPS middleware measured at least as fast as an
/// <see cref="System.Net.Security.SslStream"/> of the lane's own). The same bounds hold as on
/// Kestrel's connections: the secret within the peer timeout, the cap on lane connections over all
/// listeners, the framing checks.
/// </remarks>
internal sealed partial class BulkLaneHost
{
    private readonly List<Socket> _listeners = [];
    private readonly List<Task> _accepting = [];
    private readonly CancellationTokenSource _stopping = new();

    /// <summary>Listens on the Unix domain socket <see cref="SocketPath"/>.</summary>
    internal void ListenOnUnixSocket() =>
        Listen(new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified), new UnixDomainSocketEndPoint(SocketPath));

    /// <summary>Listens for clear-text TCP lanes on <paramref name="address"/>; returns the port bound (0: a free one).</summary>
    internal int ListenOnTcp(IPAddress address, int port)
    {
        var socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        if (address.Equals(IPAddress.IPv6Any))
        {
            socket.DualMode = true;
        }

        Listen(socket, new IPEndPoint(address, port));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }

    private void Listen(Socket socket, EndPoint endPoint)
    {
        try
        {
            socket.Bind(endPoint);
            socket.Listen(512);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        lock (_listeners)
        {
            _listeners.Add(socket);
            _accepting.Add(AcceptAsync(socket));
        }
    }

    private async Task AcceptAsync(Socket listener)
    {
        while (true)
        {
            Socket connection;
            try
            {
                connection = await listener.AcceptAsync(_stopping.Token).ConfigureAwait(false);
            }
            catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.ConnectionAborted && !_stopping.IsCancellationRequested)
            {
                // A connection reset by its peer while it waited to be accepted: the next one.
                continue;
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                if (!_stopping.IsCancellationRequested)
                {
                    // Not retried (a listener that keeps failing, out of descriptors say, would spin):
                    // new links then keep their values on the link; the links already open go on.
                    Log.ListenerFailed(_logger, e.Message);
                }

                return;
            }

            if (!TryCount())
            {
                connection.Dispose();
                continue;
            }

            _ = Serve(connection, ServeSocketAsync(connection));
        }
    }

    /// <summary>
    /// Closes the listeners and every lane connection on them, and waits until their loops ended.
    /// Payloads that came stay for their Writes; the Writes still waiting are answered ABORTED.
    /// </summary>
    internal async Task StopListeningAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        Task[] accepting;
        lock (_listeners)
        {
            foreach (Socket listener in _listeners)
            {
                listener.Dispose();
            }

            accepting = [.. _accepting];
        }

        await Task.WhenAll(accepting).ConfigureAwait(false);
        foreach ((object connection, Task serving) in _connections)
        {
            if (connection is Socket socket)
            {
                socket.Dispose();
                await serving.ConfigureAwait(false);
            }
        }
    }

    private async Task ServeSocketAsync(Socket socket)
    {
        LaneInbox? inbox = null;
        try
        {
            // The secret within the peer timeout; a connection that closes sooner ends here.
            byte[] secret = new byte[BulkLane.SecretBytes];
            using (var opening = new CancellationTokenSource(_options.PeerTimeout))
            {
                if (!await ReceiveExactlyAsync(socket, secret, opening.Token).ConfigureAwait(false))
                {
                    return;
                }
            }

            inbox = Attach(secret);
            if (inbox is null)
            {
                return;
            }

            // The connection's own: each header, and a byte[] value's presence byte with its array.
            byte[] header = new byte[BulkLane.HeaderBytes];
            var presenceAndValue = new ArraySegment<byte>[] { new byte[1], default };
            while (await ReceiveExactlyAsync(socket, header, CancellationToken.None).ConfigureAwait(false))
            {
                (ulong opId, uint length, bool bytesValue) = ParseHeader(header, inbox);
                LanePayload payload = bytesValue
                    ? await ReceiveBytesValueAsync(socket, presenceAndValue, opId, length).ConfigureAwait(false)
                    : await ReceiveAsync(socket, length).ConfigureAwait(false);
                Deliver(inbox, opId, payload, bytesValue);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or IOException or SocketException or ObjectDisposedException or InvalidDataException)
        {
            Log.Refused(_logger, e.Message);
        }
        finally
        {
            // Payloads that came stay for their Writes; the Writes still waiting are answered now.
            inbox?.End(releaseArrived: false);
            socket.Dispose();
        }
    }

    /// <summary>Fills <paramref name="target"/>; false if the peer closed before the first byte, and an error if it closed in the middle.</summary>
    private static async ValueTask<bool> ReceiveExactlyAsync(Socket socket, Memory<byte> target, CancellationToken cancellationToken)
    {
        int filled = 0;
        while (filled < target.Length)
        {
            int received = await socket.ReceiveAsync(target[filled..], SocketFlags.None, cancellationToken).ConfigureAwait(false);
            if (received == 0)
            {
                return filled == 0 ? false : throw new InvalidDataException("The lane ended in the middle of a payload.");
            }

            filled += received;
        }

        return true;
    }

    /// <summary>A payload straight into a pooled array, decoded by the end's codec when its write comes.</summary>
    private static async Task<LanePayload> ReceiveAsync(Socket socket, uint length)
    {
        byte[] payload = ArrayPool<byte>.Shared.Rent((int)length);
        try
        {
            await FillAsync(socket, payload.AsMemory(0, (int)length)).ConfigureAwait(false);
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(payload);
            throw;
        }

        return new LanePayload(payload, (int)length);
    }

    /// <summary>
    /// A <c>byte[]</c> value's encoding: its presence byte and its first bytes in one gathered
    /// receive, the rest straight into the array the reader gets (no copy in user space at all).
    /// </summary>
    private static async Task<LanePayload> ReceiveBytesValueAsync(Socket socket, ArraySegment<byte>[] presenceAndValue, ulong opId, uint length)
    {
        // Every byte is overwritten by the receive: no zeroing pass over a megabyte value.
        byte[] value = GC.AllocateUninitializedArray<byte>((int)length - 1);
        presenceAndValue[1] = value;
        int received = await socket.ReceiveAsync(presenceAndValue, SocketFlags.None).ConfigureAwait(false);
        presenceAndValue[1] = default;
        if (received == 0)
        {
            throw new InvalidDataException("The lane ended in the middle of a payload.");
        }

        CheckPresence(presenceAndValue[0].Array![0], opId);
        await FillAsync(socket, value.AsMemory(received - 1)).ConfigureAwait(false);
        return LanePayload.ReceivedBytes(value);
    }

    private static async ValueTask FillAsync(Socket socket, Memory<byte> target)
    {
        if (!target.IsEmpty && !await ReceiveExactlyAsync(socket, target, CancellationToken.None).ConfigureAwait(false))
        {
            throw new InvalidDataException("The lane ended in the middle of a payload.");
        }
    }
}
