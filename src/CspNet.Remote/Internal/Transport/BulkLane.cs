using System;
using System.Buffers.Binary;
using System.IO;
using System.Net.Security;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// The client's end of a bulk lane: a connection beside the Link stream that carries the bytes of
/// large writes, so they do not cross HTTP/2's 16 KiB DATA frames. To a home on this host (and in
/// this network namespace) it is the home's Unix domain socket; to a home elsewhere, a TCP
/// connection to the home's lane port, over TLS with the link's certificates when the link is TLS.
/// </summary>
/// <remarks>
/// The wire: the link's secret (<see cref="SecretBytes"/> bytes, from the home's Hello), then per
/// value a header (op_id, little-endian uint64; length, little-endian uint32, its top bit
/// <see cref="BytesValueFlag"/>) and the bytes. The
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

    /// <summary>
    /// The top bit of the header's length: the payload is a <c>byte[]</c> value's encoding, which the
    /// home may receive straight into the value's own array. Sent only to a home whose Hello said
    /// lane_bytes (a length never reaches it: values are at most <see cref="int.MaxValue"/> bytes).
    /// </summary>
    internal const uint BytesValueFlag = 0x8000_0000;

    /// <summary>The most plaintext in one TLS record: the header goes in the same record as the payload's first bytes.</summary>
    private const int TlsRecordBytes = 16 << 10;

    /// <summary>
    /// The send buffer of a lane's socket: a megabyte value goes into the kernel in one call. The
    /// receiving side keeps the kernel's autotuning (a fixed receive buffer would switch it off).
    /// </summary>
    private const int SendBufferBytes = 4 << 20;

    private static readonly Lazy<string> ThisHost = new(HostIdentityOfThisProcess);

    private readonly Stream _stream;

    /// <summary>The socket under a lane without TLS: a header and its payload go out in one gathered send.</summary>
    private readonly Socket? _socket;
    private readonly Channel<LaneItem> _queue = Channel.CreateUnbounded<LaneItem>(new UnboundedChannelOptions { SingleReader = true });
    private readonly bool _homeTakesBytesValues;
    private readonly Task _writer;
    private volatile bool _failed;

    private BulkLane(Stream stream, LaneKind kind, bool homeTakesBytesValues)
    {
        _stream = stream;
        _homeTakesBytesValues = homeTakesBytesValues;
        _socket = (stream as NetworkStream)?.Socket;
        Kind = kind;
        _writer = WriteLoopAsync();
    }

    /// <summary>False once the lane failed: the caller sends on the link.</summary>
    internal bool IsUsable => !_failed;

    /// <summary>How the lane travels.</summary>
    internal LaneKind Kind { get; }

    /// <summary>
    /// The host and network namespace this process runs in, as a home names it in
    /// <c>Hello.lane_host</c>: two programs with the same one reach each other's Unix domain
    /// sockets and loopback. On Linux the boot id and the network namespace's inode (network
    /// namespaces on one machine are hosts of their own); elsewhere the machine's name.
    /// </summary>
    internal static string HostIdentity => ThisHost.Value;

    /// <summary>
    /// Opens the lane a home offered in <paramref name="hello"/>: its Unix domain socket when it
    /// runs on this host, else its TCP port on <paramref name="host"/> (the host the link dialled);
    /// null when the home offered none or neither opens (the link alone is used).
    /// </summary>
    internal static async Task<BulkLane?> ConnectAsync(Hello hello, string host, CspNodeOptions options, CancellationToken cancellationToken)
    {
        if (hello.LaneSecret.Length != SecretBytes)
        {
            return null;
        }

        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(options.PeerTimeout);
        if (options.LaneOverUnixSocket && OnThisHost(hello)
            && await OpenAsync(() => ConnectUnixAsync(hello.LanePath, deadline.Token), hello, LaneKind.UnixSocket, deadline.Token).ConfigureAwait(false) is { } local)
        {
            return local;
        }

        // The secret travels in clear text only to this machine: elsewhere only inside TLS (a
        // link to another host without TLS is refused before it gets here).
        bool tls = options.TrustedCertificate is not null;
        if (hello.LanePort is 0 or > 65535 || (!tls && !Security.Certificates.IsLoopback(host)))
        {
            return null;
        }

        return await OpenAsync(() => ConnectTcpAsync(host, (int)hello.LanePort, options, deadline.Token), hello, tls ? LaneKind.Tls : LaneKind.Tcp, deadline.Token).ConfigureAwait(false);
    }

    private static bool OnThisHost(Hello hello) =>
        hello.LanePath.Length > 0 && (hello.LaneHost.Length == 0 || hello.LaneHost == HostIdentity) && File.Exists(hello.LanePath);

    private static async Task<BulkLane?> OpenAsync(Func<Task<Stream>> connect, Hello hello, LaneKind kind, CancellationToken cancellationToken)
    {
        Stream? stream = null;
        try
        {
            stream = await connect().ConfigureAwait(false);
            await stream.WriteAsync(hello.LaneSecret.Memory, cancellationToken).ConfigureAwait(false);
            return new BulkLane(stream, kind, hello.LaneBytes);
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or IOException or System.Security.Authentication.AuthenticationException)
        {
            if (stream is not null)
            {
                await stream.DisposeAsync().ConfigureAwait(false);
            }

            return null;
        }
    }

    private static async Task<Stream> ConnectUnixAsync(string path, CancellationToken cancellationToken)
    {
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            await socket.ConnectAsync(new UnixDomainSocketEndPoint(path), cancellationToken).ConfigureAwait(false);
            socket.SendBufferSize = SendBufferBytes;
            return new NetworkStream(socket, ownsSocket: true);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private static async Task<Stream> ConnectTcpAsync(string host, int port, CspNodeOptions options, CancellationToken cancellationToken)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, SendBufferSize = SendBufferBytes };
        Stream stream;
        try
        {
            await socket.ConnectAsync(host.Trim('[', ']'), port, cancellationToken).ConfigureAwait(false);
            stream = new NetworkStream(socket, ownsSocket: true);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        if (options.TrustedCertificate is not { } trusted)
        {
            return stream;
        }

        // The link's credentials: the home must show a certificate of the cluster's authority for
        // the host dialled, and this program shows its own (the home requires it under mutual TLS).
        var tls = new SslStream(stream, leaveInnerStreamOpen: false);
        try
        {
            SslClientAuthenticationOptions authentication = Security.Certificates.ClientOptions(trusted, options.Certificate);
            authentication.TargetHost = host.Trim('[', ']');
            await tls.AuthenticateAsClientAsync(authentication, cancellationToken).ConfigureAwait(false);
            return tls;
        }
        catch
        {
            await tls.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    private static string HostIdentityOfThisProcess()
    {
        if (OperatingSystem.IsLinux())
        {
            try
            {
                string boot = File.ReadAllText("/proc/sys/kernel/random/boot_id").Trim();
                string? network = new FileInfo("/proc/self/ns/net").LinkTarget;
                return $"{boot}/{network}";
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // No /proc: the machine's name, as elsewhere.
            }
        }

        return Environment.MachineName;
    }

    /// <summary>
    /// Queues a value's bytes for op <paramref name="opId"/>; false if the lane has failed. The bytes
    /// must stay untouched until the home has answered the operation. <paramref name="bytesValue"/>:
    /// they are the built-in encoding of a <c>byte[]</c> (marked for a home that takes the mark).
    /// </summary>
    internal bool TrySend(ulong opId, ReadOnlyMemory<byte> bytes, bool bytesValue = false) =>
        !_failed && _queue.Writer.TryWrite(new LaneItem(opId, bytes, bytesValue && _homeTakesBytesValues && !bytes.IsEmpty && bytes.Span[0] == Serialization.Presence.Present, PresencePrefix: false));

    /// <summary>
    /// Queues a <c>byte[]</c> value from the array itself, for op <paramref name="opId"/>: the lane
    /// sends its encoding (the presence byte, then the array) with no copy into an encode buffer.
    /// False if the lane has failed. The array must stay untouched until the home has answered.
    /// </summary>
    internal bool TrySendBytesValue(ulong opId, byte[] value) =>
        !_failed && _queue.Writer.TryWrite(new LaneItem(opId, value, _homeTakesBytesValues, PresencePrefix: true));

    private async Task WriteLoopAsync()
    {
        // The header, then (for a value sent from its own array) the presence byte of its encoding.
        byte[] header = new byte[HeaderBytes + 1];
        header[HeaderBytes] = Serialization.Presence.Present;
        var gathered = new ArraySegment<byte>[2];
        byte[]? firstRecord = null;
        try
        {
            ChannelReader<LaneItem> reader = _queue.Reader;
            while (await reader.WaitToReadAsync().ConfigureAwait(false))
            {
                while (reader.TryRead(out LaneItem item))
                {
                    int headed = item.PresencePrefix ? HeaderBytes + 1 : HeaderBytes;
                    uint length = (uint)(item.Bytes.Length + headed - HeaderBytes);
                    BinaryPrimitives.WriteUInt64LittleEndian(header, item.OpId);
                    BinaryPrimitives.WriteUInt32LittleEndian(header.AsSpan(8), length | (item.BytesValue ? BytesValueFlag : 0));
                    if (_socket is not null && MemoryMarshal.TryGetArray(item.Bytes, out ArraySegment<byte> payload))
                    {
                        // One system call per value, and the home wakes once for header and bytes
                        // (two sends let it wake for the 12-byte header alone).
                        gathered[0] = new ArraySegment<byte>(header, 0, headed);
                        gathered[1] = payload;
                        int sent = await _socket.SendAsync(gathered, SocketFlags.None).ConfigureAwait(false);
                        if (sent < headed)
                        {
                            await _stream.WriteAsync(header.AsMemory(sent, headed - sent)).ConfigureAwait(false);
                            sent = headed;
                        }

                        if (sent - headed < item.Bytes.Length)
                        {
                            await _stream.WriteAsync(item.Bytes[(sent - headed)..]).ConfigureAwait(false);
                        }
                    }
                    else
                    {
                        // TLS: the header and the payload's first bytes in one record (the header
                        // alone would cost a record, and the home a wake-up, of its own).
                        firstRecord ??= new byte[TlsRecordBytes];
                        header.AsSpan(0, headed).CopyTo(firstRecord);
                        int first = Math.Min(item.Bytes.Length, TlsRecordBytes - headed);
                        item.Bytes.Span[..first].CopyTo(firstRecord.AsSpan(headed));
                        await _stream.WriteAsync(firstRecord.AsMemory(0, headed + first)).ConfigureAwait(false);
                        if (first < item.Bytes.Length)
                        {
                            await _stream.WriteAsync(item.Bytes[first..]).ConfigureAwait(false);
                        }
                    }
                }
            }
        }
#pragma warning disable CA1031 // Any failure ends the lane; the home answers ABORTED for what it missed.
        catch (Exception)
#pragma warning restore CA1031
        {
            _failed = true;
            _queue.Writer.TryComplete();
            _stream.Dispose();
        }
    }

    /// <summary>Breaks the lane at once (the link's values are not affected); for tests of the fallback.</summary>
    internal void Break()
    {
        _failed = true;
        _stream.Dispose();
    }

    public async ValueTask DisposeAsync()
    {
        _failed = true;
        _queue.Writer.TryComplete();
        await _stream.DisposeAsync().ConfigureAwait(false);
        await _writer.ConfigureAwait(false);
    }
}

/// <summary>
/// A value queued on a lane: its bytes, whether the home may receive it straight into a
/// <c>byte[]</c> (the header's mark), and whether the bytes are a <c>byte[]</c> value's own array,
/// sent after its encoding's presence byte.
/// </summary>
internal readonly record struct LaneItem(ulong OpId, ReadOnlyMemory<byte> Bytes, bool BytesValue, bool PresencePrefix);

/// <summary>How a bulk lane travels.</summary>
internal enum LaneKind
{
    /// <summary>The home's Unix domain socket: the home is on this host.</summary>
    UnixSocket,

    /// <summary>TCP in clear text, to this machine's loopback only.</summary>
    Tcp,

    /// <summary>TCP inside TLS with the link's certificates.</summary>
    Tls,
}
