using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Transport;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>
/// The lanes' listeners and connections, on sockets of the lane's own: the Unix domain socket and
/// TCP in clear text receive every payload's bytes from the kernel straight into the array the
/// value is read from, as a raw socket reader does; TCP under TLS (whenever the program has a
/// certificate) decrypts them with one copy into that array, as a raw TLS reader does. Through
/// Kestrel the bytes crossed its connection pipes first: one more copy of every byte, and a
/// ThreadPool hand-off between Kestrel's receive loop, its TLS and the lane's reader.
/// </summary>
/// <remarks>
/// The bounds of Kestrel's connections hold here too: the TLS handshake within
/// <see cref="NodeTransport.HandshakeTimeout"/>, the secret within the peer timeout, the cap on lane
/// connections over all listeners (<see cref="CspNodeOptions.MaxConnections"/>), the framing checks.
/// </remarks>
internal sealed partial class BulkLaneHost
{
    private readonly List<Socket> _listeners = [];
    private readonly List<Task> _accepting = [];
    private readonly CancellationTokenSource _stopping = new();
    private SslStreamCertificateContext? _tlsCertificate;

    /// <summary>This program's certificate for the TLS lane's handshakes, built once (its chain included).</summary>
    private SslStreamCertificateContext TlsCertificate =>
        _tlsCertificate ??= SslStreamCertificateContext.Create(_options.Certificate!, additionalCertificates: null, offline: true);

    /// <summary>Listens on the Unix domain socket <see cref="SocketPath"/>.</summary>
    internal void ListenOnUnixSocket() =>
        Listen(new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified), new UnixDomainSocketEndPoint(SocketPath), tls: false);

    /// <summary>Listens for clear-text TCP lanes on <paramref name="address"/>; returns the port bound (0: a free one).</summary>
    internal int ListenOnTcp(IPAddress address, int port)
    {
        var socket = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        if (address.Equals(IPAddress.IPv6Any))
        {
            socket.DualMode = true;
        }

        Listen(socket, new IPEndPoint(address, port), tls: _options.Certificate is not null);
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }

    private void Listen(Socket socket, EndPoint endPoint, bool tls)
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
            _accepting.Add(AcceptAsync(socket, tls));
        }
    }

    private async Task AcceptAsync(Socket listener, bool tls)
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

            _ = Serve(connection, ServeSocketAsync(connection, tls));
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
        foreach ((Socket connection, Task serving) in _connections)
        {
            connection.Dispose();
            await serving.ConfigureAwait(false);
        }
    }

    private async Task ServeSocketAsync(Socket socket, bool tls)
    {
        LaneInbox? inbox = null;
        LaneSource? source = null;
        try
        {
            source = tls
                ? await TlsLaneSource.AuthenticateAsync(socket, TlsCertificate, _options.TrustedCertificate, NodeTransport.HandshakeTimeout(_options.PeerTimeout)).ConfigureAwait(false)
                : new SocketLaneSource(socket);

            // The secret within the peer timeout; a connection that closes sooner ends here.
            byte[] secret = new byte[BulkLane.SecretBytes];
            using (var opening = new CancellationTokenSource(_options.PeerTimeout))
            {
                if (!await source.ReceiveExactlyAsync(secret, opening.Token).ConfigureAwait(false))
                {
                    return;
                }
            }

            inbox = Attach(secret);
            if (inbox is null)
            {
                return;
            }

            byte[] header = new byte[BulkLane.HeaderBytes];
            while (await source.ReceiveExactlyAsync(header, CancellationToken.None).ConfigureAwait(false))
            {
                (ulong opId, uint length, bool bytesValue) = ParseHeader(header, inbox);
                LanePayload payload = bytesValue
                    ? await source.ReceiveBytesValueAsync(opId, length).ConfigureAwait(false)
                    : await source.ReceiveAsync(length).ConfigureAwait(false);
                Deliver(inbox, opId, payload, bytesValue);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or IOException or SocketException or ObjectDisposedException or InvalidDataException or AuthenticationException)
        {
            Log.Refused(_logger, e.Message);
        }
        finally
        {
            // Payloads that came stay for their Writes; the Writes still waiting are answered now.
            inbox?.End(releaseArrived: false);
            source?.Dispose();
            socket.Dispose();
        }
    }
}
