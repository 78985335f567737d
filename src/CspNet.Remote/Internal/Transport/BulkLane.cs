using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.IO;
using System.Net.Security;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
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
/// at a time, in the order queued, from one sender at a time: the writer that queued a value sends
/// it on its own thread when the lane is idle and the kernel takes it at once; a loop on the
/// ThreadPool sends the rest. A lane that fails once stays failed: the payloads
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
    private readonly bool _homeTakesBytesValues;

    // Values wait in _pending, in the order queued, for the one sender of the moment (_sending):
    // a writer sending inline, or the loop that sends what came meanwhile.
    private readonly Lock _gate = new();
    private readonly Queue<LaneItem> _pending = new();
    private bool _sending;
    private volatile bool _failed;
    private Task _sender = Task.CompletedTask; // the latest loop, awaited when the lane is disposed
    private long _inlineSends;

    // The sender's own: the header, then (for a value sent from its own array) the presence byte of
    // its encoding; the gathered send's segments; the TLS lane's first record.
    private readonly byte[] _header = CreateHeader();
    private readonly ArraySegment<byte>[] _gathered = new ArraySegment<byte>[2];
    private byte[]? _firstRecord;

    private BulkLane(Stream stream, LaneKind kind, bool homeTakesBytesValues)
    {
        _stream = stream;
        _homeTakesBytesValues = homeTakesBytesValues;
        _socket = (stream as NetworkStream)?.Socket;
        Kind = kind;
    }

    private static byte[] CreateHeader()
    {
        byte[] header = new byte[HeaderBytes + 1];
        header[HeaderBytes] = Serialization.Presence.Present;
        return header;
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
    /// The caller then sends what it queued with <see cref="SendQueued"/>.
    /// </summary>
    internal bool TrySend(ulong opId, ReadOnlyMemory<byte> bytes, bool bytesValue = false) =>
        TryQueue(new LaneItem(opId, bytes, bytesValue && _homeTakesBytesValues && !bytes.IsEmpty && bytes.Span[0] == Serialization.Presence.Present, PresencePrefix: false));

    /// <summary>
    /// Queues a <c>byte[]</c> value from the array itself, for op <paramref name="opId"/>: the lane
    /// sends its encoding (the presence byte, then the array) with no copy into an encode buffer.
    /// False if the lane has failed. The array must stay untouched until the home has answered.
    /// The caller then sends what it queued with <see cref="SendQueued"/>.
    /// </summary>
    internal bool TrySendBytesValue(ulong opId, byte[] value) =>
        TryQueue(new LaneItem(opId, value, _homeTakesBytesValues, PresencePrefix: true));

    private bool TryQueue(LaneItem item)
    {
        lock (_gate)
        {
            if (_failed)
            {
                return false;
            }

            _pending.Enqueue(item);
            return true;
        }
    }

    /// <summary>
    /// Sends what is queued, on the calling thread while the kernel takes it at once: a lane with
    /// no send in progress starts the first queued value here (no hand-off to another thread), and
    /// leaves the rest, and a send that would block, to a loop on the ThreadPool. A lane already
    /// sending sends what was queued after what it sends now. Called by whoever queued a value,
    /// after it queued the value's Write frame on the link and outside its locks.
    /// </summary>
    internal void SendQueued()
    {
        LaneItem item;
        lock (_gate)
        {
            if (_sending || !_pending.TryDequeue(out item))
            {
                return;
            }

            _sending = true;
        }

        ValueTask sending = SendOneAsync(item, inline: true);
        if (!sending.IsCompletedSuccessfully)
        {
            // The kernel did not take it all (or the lane failed): the rest of this send, and what
            // follows, continue off the writer's thread.
            Volatile.Write(ref _sender, SendRestAsync(sending));
            return;
        }

        Interlocked.Increment(ref _inlineSends);
        lock (_gate)
        {
            if (_failed || _pending.Count == 0)
            {
                _sending = false;
                return;
            }
        }

        // Others queued values meanwhile: a loop sends them, so that this writer goes on.
        Volatile.Write(ref _sender, Task.Run(() => SendRestAsync(ValueTask.CompletedTask)));
    }

    /// <summary>Finishes <paramref name="inFlight"/>, then sends what is queued until nothing is; the one sender meanwhile.</summary>
    private async Task SendRestAsync(ValueTask inFlight)
    {
        try
        {
            await inFlight.ConfigureAwait(false);
            while (true)
            {
                LaneItem item;
                lock (_gate)
                {
                    if (_failed || !_pending.TryDequeue(out item))
                    {
                        _sending = false;
                        return;
                    }
                }

                await SendOneAsync(item, inline: false).ConfigureAwait(false);
            }
        }
#pragma warning disable CA1031 // Any failure ends the lane; the home answers ABORTED for what it missed.
        catch (Exception)
#pragma warning restore CA1031
        {
            Fail();
        }
    }

    /// <summary>Sends one value, header first; by the one sender of the moment (the header buffers are its own).</summary>
    private async ValueTask SendOneAsync(LaneItem item, bool inline)
    {
        if (PartSentForTests is { } partSent)
        {
            await SendInTwoPartsAsync(item, partSent, inline).ConfigureAwait(false);
            return;
        }

        int headed = item.PresencePrefix ? HeaderBytes + 1 : HeaderBytes;
        uint length = (uint)(item.Bytes.Length + headed - HeaderBytes);
        byte[] header = _header;
        BinaryPrimitives.WriteUInt64LittleEndian(header, item.OpId);
        BinaryPrimitives.WriteUInt32LittleEndian(header.AsSpan(8), length | (item.BytesValue ? BytesValueFlag : 0));
        if (_socket is not null && MemoryMarshal.TryGetArray(item.Bytes, out ArraySegment<byte> payload))
        {
            // One system call per value, and the home wakes once for header and bytes
            // (two sends let it wake for the 12-byte header alone).
            _gathered[0] = new ArraySegment<byte>(header, 0, headed);
            _gathered[1] = payload;
            int sent = await _socket.SendAsync(_gathered, SocketFlags.None).ConfigureAwait(false);
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
            byte[] firstRecord = _firstRecord ??= new byte[TlsRecordBytes];
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

    /// <summary>
    /// Tests only: called between the two halves of each value, which then go in two writes (true:
    /// the send was started by the writer's own thread), so a test can break the lane mid-value.
    /// </summary>
    internal Action<bool>? PartSentForTests { get; set; }

    /// <summary>How many values the writer's own thread sent whole (the kernel took them at once); for tests.</summary>
    internal long InlineSends => Interlocked.Read(ref _inlineSends);

    private async ValueTask SendInTwoPartsAsync(LaneItem item, Action<bool> partSent, bool inline)
    {
        byte[] header = _header;
        int headed = item.PresencePrefix ? HeaderBytes + 1 : HeaderBytes;
        BinaryPrimitives.WriteUInt64LittleEndian(header, item.OpId);
        BinaryPrimitives.WriteUInt32LittleEndian(header.AsSpan(8), (uint)(item.Bytes.Length + headed - HeaderBytes) | (item.BytesValue ? BytesValueFlag : 0));
        int half = item.Bytes.Length / 2;
        await _stream.WriteAsync(header.AsMemory(0, headed)).ConfigureAwait(false);
        await _stream.WriteAsync(item.Bytes[..half]).ConfigureAwait(false);
        partSent(inline);
        await _stream.WriteAsync(item.Bytes[half..]).ConfigureAwait(false);
    }

    /// <summary>
    /// The lane failed: it stays failed, and what is queued on it is dropped (the home answers
    /// ABORTED for each value whose Write it has, and the writer sends it on the link).
    /// </summary>
    private void Fail()
    {
        lock (_gate)
        {
            _failed = true;
            _pending.Clear();
            _sending = false;
        }

        _stream.Dispose();
    }

    /// <summary>Breaks the lane at once (the link's values are not affected); for tests of the fallback.</summary>
    internal void Break() => Fail();

    public async ValueTask DisposeAsync()
    {
        Fail();
        await Volatile.Read(ref _sender).ConfigureAwait(false);
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
