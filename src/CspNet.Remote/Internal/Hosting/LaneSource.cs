using System;
using System.Buffers;
using System.IO;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Homes;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>
/// Where one lane connection's bytes come from: a socket in clear text (the Unix domain socket, TCP
/// when the link has no TLS) or a TLS session on one. The connection's loop reads every header and
/// payload through it, so the framing and its checks are written once.
/// </summary>
internal abstract class LaneSource : IDisposable
{
    /// <summary>Fills <paramref name="target"/>; false if the peer closed before the first byte, and an error if it closed in the middle.</summary>
    internal abstract ValueTask<bool> ReceiveExactlyAsync(Memory<byte> target, CancellationToken cancellationToken);

    /// <summary>
    /// A <c>byte[]</c> value's encoding of <paramref name="length"/> bytes (its presence byte, then
    /// its bytes), the bytes straight into an array of their exact length, which becomes the
    /// reader's value.
    /// </summary>
    internal abstract ValueTask<LanePayload> ReceiveBytesValueAsync(ulong opId, uint length);

    public abstract void Dispose();

    /// <summary>A payload into a pooled array, decoded by the end's codec when its write comes.</summary>
    internal async ValueTask<LanePayload> ReceiveAsync(uint length)
    {
        byte[] payload = ArrayPool<byte>.Shared.Rent((int)length);
        try
        {
            await FillAsync(payload.AsMemory(0, (int)length)).ConfigureAwait(false);
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(payload);
            throw;
        }

        return new LanePayload(payload, (int)length);
    }

    /// <summary>Fills <paramref name="target"/>, in the middle of a payload: the peer closing is an error.</summary>
    protected async ValueTask FillAsync(Memory<byte> target)
    {
        if (!target.IsEmpty && !await ReceiveExactlyAsync(target, CancellationToken.None).ConfigureAwait(false))
        {
            throw new InvalidDataException("The lane ended in the middle of a payload.");
        }
    }

    /// <summary>Throws unless <paramref name="presence"/> is the presence byte a <c>byte[]</c> value's encoding starts with.</summary>
    protected static void CheckPresence(byte presence, ulong opId)
    {
        if (presence != Serialization.Presence.Present)
        {
            throw new InvalidDataException($"A lane payload for op {opId} is marked as a byte[] value but does not start with the presence byte 1.");
        }
    }
}

/// <summary>A lane in clear text: each payload received from the kernel straight into its array, as a raw socket reader does.</summary>
internal sealed class SocketLaneSource(Socket socket) : LaneSource
{
    private readonly ArraySegment<byte>[] _presenceAndValue = [new byte[1], default];

    internal override async ValueTask<bool> ReceiveExactlyAsync(Memory<byte> target, CancellationToken cancellationToken)
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

    /// <remarks>The presence byte and the first bytes in one gathered receive: no copy in user space at all.</remarks>
    internal override async ValueTask<LanePayload> ReceiveBytesValueAsync(ulong opId, uint length)
    {
        // Every byte is overwritten by the receive: no zeroing pass over a megabyte value.
        byte[] value = GC.AllocateUninitializedArray<byte>((int)length - 1);
        _presenceAndValue[1] = value;
        int received = await socket.ReceiveAsync(_presenceAndValue, SocketFlags.None).ConfigureAwait(false);
        _presenceAndValue[1] = default;
        if (received == 0)
        {
            throw new InvalidDataException("The lane ended in the middle of a payload.");
        }

        CheckPresence(_presenceAndValue[0].Array![0], opId);
        await FillAsync(value.AsMemory(received - 1)).ConfigureAwait(false);
        return LanePayload.ReceivedBytes(value);
    }

    public override void Dispose() => socket.Dispose();
}

/// <summary>
/// A lane sealed as the link is: TLS with this program's certificate, the client's certificate
/// required under mutual TLS. Each payload is decrypted and copied once, into its array.
/// </summary>
internal sealed class TlsLaneSource : LaneSource
{
    private readonly SslStream _tls;
    private readonly byte[] _presence = new byte[1];

    private TlsLaneSource(SslStream tls) => _tls = tls;

    /// <summary>The server's side of the handshake on <paramref name="socket"/>, within <paramref name="timeout"/>; the socket is closed if it fails.</summary>
    internal static async Task<TlsLaneSource> AuthenticateAsync(Socket socket, SslStreamCertificateContext certificate, X509Certificate2? authority, TimeSpan timeout)
    {
        var tls = new SslStream(new NetworkStream(socket, ownsSocket: true), leaveInnerStreamOpen: false);
        try
        {
            var options = new SslServerAuthenticationOptions
            {
                ServerCertificateContext = certificate,
                CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            };
            if (authority is not null)
            {
                // Mutual TLS: only programs with a certificate from the cluster's authority get in.
                options.ClientCertificateRequired = true;
                options.RemoteCertificateValidationCallback = (_, presented, _, _) =>
                    Security.Certificates.IsValidClient(presented as X509Certificate2, authority);
            }

            using var deadline = new CancellationTokenSource(timeout);
            await tls.AuthenticateAsServerAsync(options, deadline.Token).ConfigureAwait(false);
            return new TlsLaneSource(tls);
        }
        catch
        {
            await tls.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    internal override async ValueTask<bool> ReceiveExactlyAsync(Memory<byte> target, CancellationToken cancellationToken)
    {
        int received = await _tls.ReadAtLeastAsync(target, target.Length, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
        return received == target.Length || (received == 0 ? false : throw new InvalidDataException("The lane ended in the middle of a payload."));
    }

    internal override async ValueTask<LanePayload> ReceiveBytesValueAsync(ulong opId, uint length)
    {
        await FillAsync(_presence).ConfigureAwait(false);
        CheckPresence(_presence[0], opId);

        // Every byte is overwritten by the copy in: no zeroing pass over a megabyte value.
        byte[] value = GC.AllocateUninitializedArray<byte>((int)length - 1);
        await FillAsync(value).ConfigureAwait(false);
        return LanePayload.ReceivedBytes(value);
    }

    public override void Dispose() => _tls.Dispose();
}
