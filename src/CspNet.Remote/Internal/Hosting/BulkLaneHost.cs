using System;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.IO;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Transport;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>
/// The home's end of bulk lanes: a Unix domain socket in a directory only this user can enter (for
/// programs on this host) and a TCP port on the program's address (for the others; TLS with the
/// link's certificates when the link is TLS), both on sockets of the lane's own beside Kestrel's Link
/// endpoint, and the secrets that tie each connection to one Link stream's <see cref="LaneInbox"/>.
/// </summary>
/// <remarks>
/// A connection that does not open with a live secret within the peer timeout, or that breaks the
/// framing (a payload longer than the largest value allowed, an op_id sent twice, more bytes
/// pending than the inbox holds), is closed; the Link stream and every other connection go on.
/// </remarks>
internal sealed partial class BulkLaneHost : ILaneRegistry, IDisposable
{
    private readonly ConcurrentDictionary<string, LaneInbox> _inboxes = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<Socket, Task> _connections = new();
    private readonly string _directory;
    private readonly CspNodeOptions _options;
    private readonly ILogger _logger;
    private long _bytesValuesReceived;
    private int _open;

    private BulkLaneHost(string directory, CspNodeOptions options, ILogger logger)
    {
        _directory = directory;
        _options = options;
        _logger = logger;
        SocketPath = Path.Combine(directory, "lane.sock");
    }

    /// <inheritdoc/>
    public string SocketPath { get; }

    /// <inheritdoc/>
    public int TcpPort { get; internal set; }

    /// <inheritdoc/>
    public string HostIdentity => BulkLane.HostIdentity;

    /// <summary>How many <c>byte[]</c> values this program's lanes received straight into their own arrays; for tests.</summary>
    internal long BytesValuesReceived => Interlocked.Read(ref _bytesValuesReceived);

    /// <summary>A lane endpoint for this program, or null where Unix domain sockets are not used (Windows).</summary>
    internal static BulkLaneHost? Create(CspNodeOptions options, ILogger logger)
    {
        if (!options.BulkLane || OperatingSystem.IsWindows())
        {
            return null;
        }

        RemoveLeftBehind();

        // 0700: another local user cannot connect at all; the secret keeps out this user's other programs.
        string directory = Path.Combine(Path.GetTempPath(), FormattableString.Invariant($"{DirectoryPrefix}{Environment.ProcessId}-{Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(12))}"));
        Directory.CreateDirectory(directory, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return new BulkLaneHost(directory, options, logger);
    }

    private const string DirectoryPrefix = "cspnet-lane-";

    /// <summary>
    /// Deletes the lane directories of programs that were killed before they could (named after
    /// their process id, which no running process has any more). Harmless if left: nobody holds a
    /// secret for their sockets. Another user's directories cannot be deleted (the sticky temp
    /// directory), and are skipped.
    /// </summary>
    private static void RemoveLeftBehind()
    {
        foreach (string directory in Directory.EnumerateDirectories(Path.GetTempPath(), DirectoryPrefix + "*"))
        {
            string[] parts = Path.GetFileName(directory)[DirectoryPrefix.Length..].Split('-');
            if (parts.Length != 2 || !int.TryParse(parts[0], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int pid) || IsRunning(pid))
            {
                continue;
            }

            try
            {
                Directory.Delete(directory, recursive: true);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // Another user's, or removed meanwhile: nothing of ours to clean.
            }
        }
    }

    private static bool IsRunning(int pid) => Directory.Exists(Path.Combine("/proc", pid.ToString(System.Globalization.CultureInfo.InvariantCulture))) || !Directory.Exists("/proc");

    /// <inheritdoc/>
    public byte[] Open(LaneInbox inbox)
    {
        byte[] secret = RandomNumberGenerator.GetBytes(BulkLane.SecretBytes);
        _inboxes[Key(secret)] = inbox;
        return secret;
    }

    /// <inheritdoc/>
    public void Close(byte[] secret) => _inboxes.TryRemove(Key(secret), out _);

    /// <summary>Counts a new lane connection; false (logged) if the cap is reached: the caller closes it.</summary>
    private bool TryCount()
    {
        if (Interlocked.Increment(ref _open) > _options.MaxConnections)
        {
            Interlocked.Decrement(ref _open);
            Log.Refused(_logger, FormattableString.Invariant($"{_options.MaxConnections} lane connections are open already (CspNodeOptions.MaxConnections)"));
            return false;
        }

        return true;
    }

    private Task Serve(Socket connection, Task serving)
    {
        _connections[connection] = serving;
        return ForgetWhenDoneAsync(connection, serving);
    }

    /// <summary>Closes every lane connection, as a failing socket would, and waits until each has ended; for tests of the fallback.</summary>
    internal async Task DropConnectionsAsync()
    {
        foreach ((Socket connection, Task serving) in _connections)
        {
            connection.Dispose();
            await serving.ConfigureAwait(false);
        }
    }

    private async Task ForgetWhenDoneAsync(Socket connection, Task serving)
    {
        try
        {
            await serving.ConfigureAwait(false);
        }
        finally
        {
            _connections.TryRemove(connection, out _);
            Interlocked.Decrement(ref _open);
        }
    }

    /// <summary>The lane connection's inbox for <paramref name="secret"/>; null (logged) if no Link stream holds it or a connection has it already.</summary>
    private LaneInbox? Attach(byte[] secret)
    {
        if (_inboxes.TryGetValue(Key(secret), out LaneInbox? inbox) && inbox.TryAttach())
        {
            return inbox;
        }

        Log.Refused(_logger, "no Link stream holds the secret it presented");
        return null;
    }

    /// <summary>A payload's header: its op, its length and whether it is a <c>byte[]</c> value's encoding; a header that breaks the framing throws.</summary>
    private (ulong OpId, uint Length, bool BytesValue) ParseHeader(ReadOnlySpan<byte> header, LaneInbox inbox)
    {
        ulong opId = BinaryPrimitives.ReadUInt64LittleEndian(header);
        uint lengthField = BinaryPrimitives.ReadUInt32LittleEndian(header[8..]);
        bool bytesValue = (lengthField & BulkLane.BytesValueFlag) != 0;
        uint length = lengthField & ~BulkLane.BytesValueFlag;
        if (bytesValue && !inbox.TakesBytesValues)
        {
            throw new InvalidDataException($"A lane payload for op {opId} is marked as a byte[] value, which this stream's Hello did not agree to (Hello.lane_bytes).");
        }

        if (length > _options.MaxValueSize || length > inbox.MaxPendingBytes)
        {
            throw new InvalidDataException($"A lane payload of {length:N0} bytes is larger than the largest value allowed.");
        }

        if (bytesValue && length == 0)
        {
            throw new InvalidDataException($"A lane payload for op {opId} is marked as a byte[] value but is empty: a byte[] value's encoding starts with the presence byte 1.");
        }

        return (opId, length, bytesValue);
    }

    /// <summary>Hands a whole payload to its Write; a payload the inbox refuses breaks the framing.</summary>
    private void Deliver(LaneInbox inbox, ulong opId, LanePayload payload, bool bytesValue)
    {
        if (bytesValue)
        {
            // Counted before the reader can have it, so a test that has read the value sees the count.
            Interlocked.Increment(ref _bytesValuesReceived);
        }

        if (!inbox.Deliver(opId, payload))
        {
            payload.Return();
            throw new InvalidDataException($"A lane payload for op {opId} was refused (sent twice, or more bytes pending than the lane holds).");
        }
    }

    private static string Key(byte[] secret) => Convert.ToBase64String(SHA256.HashData(secret));

    public void Dispose()
    {
        _stopping.Dispose();
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
            // Already gone: nothing to clean.
        }
    }

    private static partial class Log
    {
        [LoggerMessage(1, LogLevel.Warning, "A bulk lane connection was closed: {Reason}")]
        internal static partial void Refused(ILogger logger, string reason);

        [LoggerMessage(2, LogLevel.Error, "A bulk lane listener stopped accepting connections: {Reason}. New links keep their values on the link.")]
        internal static partial void ListenerFailed(ILogger logger, string reason);
    }
}
