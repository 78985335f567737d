using System;
using System.Collections.Generic;
using System.IO;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Naming;

/// <summary>This program's connection to the NameServer: its lease, its names, and look-ups.</summary>
/// <remarks>
/// <para>
/// The client holds one lease, renewed every third of its time to live by a timer loop. When a
/// renewal (or any call under the lease) answers NOT_FOUND, the NameServer restarted or the lease
/// expired: the client opens a new lease, registers every name it holds again and raises
/// <see cref="IncarnationChanged"/>. Calls under the lease are serialised by one gate, so a
/// re-registration never races a registration.
/// </para>
/// <para>
/// Every call retries while the NameServer is unreachable, with exponential back-off, and gives
/// up with <see cref="NameServerUnavailableException"/> once it has been unreachable for
/// <see cref="NameServerClientOptions.NameServerTimeout"/> without a break.
/// </para>
/// </remarks>
internal sealed partial class NameServerClient : IAsyncDisposable
{
    private readonly Proto.NameServer.NameServerClient _client;
    private readonly GrpcChannel _channel;
    private readonly LinkEndpoint _link;
    private readonly string _programLabel;
    private readonly NameServerClientOptions _options;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly SemaphoreSlim _gate = new(1, 1);
    private readonly CancellationTokenSource _disposing = new();

    // Guarded by _gate: the names to register again under a new lease, as the program asked for them.
    private readonly Dictionary<string, NameEntry> _registered = new(StringComparer.Ordinal);
    private bool _reregistrationPending;

    // Guarded by _gate: the worker pool registered under the lease (if any), with its latest free count.
    private WorkerPoolEntry? _pool;

    private volatile string? _leaseId;
    private TimeSpan _ttl;
    private Task _renewLoop = Task.CompletedTask;
    private int _disposed;

    public NameServerClient(Uri nameServer, LinkEndpoint link, string programLabel, NameServerClientOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(nameServer);
        if (!nameServer.IsAbsoluteUri || (nameServer.Scheme != Uri.UriSchemeHttp && nameServer.Scheme != Uri.UriSchemeHttps))
        {
            throw new ArgumentException($"The NameServer address '{nameServer}' is not an absolute http:// or https:// address.", nameof(nameServer));
        }

        NameValidation.Endpoint(link, nameof(link));
        NameValidation.ProgramLabel(programLabel);
        NameServer = nameServer;
        _link = link;
        _programLabel = programLabel;
        _options = options ?? new NameServerClientOptions();
        _time = _options.TimeProvider;
        _logger = _options.LoggerFactory?.CreateLogger<NameServerClient>() ?? (ILogger)NullLogger.Instance;
        HttpMessageHandler handler = _options.HttpHandler ?? new SocketsHttpHandler
        {
            // A NameServer that is down must fail a call quickly, so that the retry loop decides.
            ConnectTimeout = _options.CallTimeout,
            EnableMultipleHttp2Connections = true,
            PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan,
            SslOptions = new System.Net.Security.SslClientAuthenticationOptions
            {
                RemoteCertificateValidationCallback = _options.TrustedCertificate is { } trusted ? Security.Certificates.ServerValidator(trusted) : null,
            },
        };
        // No key configured: this user's own, as the NameServer's default is.
        string key = Security.ClusterKeys.Effective(_options.ClusterKey);
        if (!Security.Certificates.MayCarrySecrets(nameServer))
        {
            throw new ArgumentException(
                $"The NameServer {nameServer} is on another machine over plain HTTP: the cluster key would travel in clear text. Serve the NameServer over TLS and dial it as https://.",
                nameof(nameServer));
        }

        handler = new ClusterKeyHandler(key, handler);
        _channel = GrpcChannel.ForAddress(nameServer, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            LoggerFactory = _options.LoggerFactory,

            // Not ThrowOperationCanceledOnCancellation: it turns DEADLINE_EXCEEDED into an
            // OperationCanceledException too, and Resolve's DEADLINE_EXCEEDED means "ask again".
        });
        _client = new Proto.NameServer.NameServerClient(_channel);
    }

    /// <summary>Raised, off the gate, when the client had to open a new lease (old, new incarnation); it has registered its names again, or will at the next renewal if that failed part-way.</summary>
    public event Action<string, string>? IncarnationChanged;

    /// <summary>The NameServer's address.</summary>
    public Uri NameServer { get; }

    /// <summary>This program's incarnation: its current lease id.</summary>
    /// <exception cref="InvalidOperationException">The client has not started.</exception>
    public string Incarnation => _leaseId ?? throw new InvalidOperationException("The NameServer client has not started.");

    /// <summary>The incarnation other programs see in this program's entries (derived from the lease id, which stays secret).</summary>
    public string PublicIncarnation => Incarnations.Of(Incarnation);

    /// <summary>Opens the lease and starts renewing it.</summary>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_leaseId is not null)
            {
                throw new InvalidOperationException("The NameServer client has already started.");
            }

            await OpenLeaseLockedAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _gate.Release();
        }

        _renewLoop = RenewLoopAsync(_disposing.Token);
    }

    /// <summary>Registers a name under this program's lease and remembers it for re-registration.</summary>
    /// <returns>The registered entry, or the existing one when <paramref name="returnExisting"/> is set and the name was taken.</returns>
    /// <exception cref="NameAlreadyRegisteredException">The name is taken and <paramref name="returnExisting"/> is not set.</exception>
    public async Task<NameEntry> RegisterAsync(NameEntry entry, bool returnExisting, CancellationToken cancellationToken)
    {
        NameValidation.Entry(entry);
        NameEntry result;
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        string? before = _leaseId;
        try
        {
            Proto.RegisterReply reply;
            try
            {
                reply = await RegisterLockedAsync(entry, returnExisting, cancellationToken).ConfigureAwait(false);
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.NotFound)
            {
                await ReopenLeaseLockedAsync(cancellationToken).ConfigureAwait(false);
                reply = await RegisterLockedAsync(entry, returnExisting, cancellationToken).ConfigureAwait(false);
            }

            result = NameProtocol.FromProto(reply.Entry);
            if (reply.Created || result.Incarnation == PublicIncarnation)
            {
                _registered[entry.Name] = entry;
            }
        }
        catch (RpcException e)
        {
            throw Translate(e);
        }
        finally
        {
            ReleaseGate(before);
        }

        return result;
    }

    /// <summary>Removes a name this program registered; a name already gone is not an error.</summary>
    public async Task UnregisterAsync(string name, CancellationToken cancellationToken)
    {
        NameValidation.Name(name);
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            _registered.Remove(name);
            var request = new Proto.UnregisterRequest { LeaseId = Incarnation, Name = name };
            await CallAsync(o => _client.UnregisterAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.NotFound)
        {
            // Not registered under this lease, or the lease is gone and took its names with it.
        }
        catch (RpcException e)
        {
            throw Translate(e);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Registers this program's worker pool under its lease and remembers it for re-registration.</summary>
    public async Task<WorkerPoolEntry> RegisterPoolAsync(WorkerPoolEntry pool, CancellationToken cancellationToken)
    {
        NameValidation.Pool(pool);
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        string? before = _leaseId;
        try
        {
            _pool = pool;
            try
            {
                return await RegisterPoolLockedAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.NotFound)
            {
                // The lease is gone: the new one gets the pool with the names.
                await ReopenLeaseLockedAsync(cancellationToken).ConfigureAwait(false);
                return _pool;
            }
        }
        catch (RpcException e)
        {
            throw Translate(e);
        }
        finally
        {
            ReleaseGate(before);
        }
    }

    /// <summary>Tells the NameServer the pool's free-worker count; a lost lease is reopened with the pool registered again.</summary>
    public async Task UpdatePoolAsync(int freeWorkers, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        string? before = _leaseId;
        try
        {
            if (_pool is null)
            {
                throw new InvalidOperationException("No worker pool is registered: call RegisterPoolAsync first.");
            }

            _pool = _pool with { FreeWorkers = freeWorkers };
            try
            {
                var request = new Proto.UpdatePoolRequest { LeaseId = Incarnation, FreeWorkers = freeWorkers };
                await CallAsync(o => _client.UpdatePoolAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.NotFound)
            {
                await ReopenLeaseLockedAsync(cancellationToken).ConfigureAwait(false);
            }
        }
        catch (RpcException e)
        {
            throw Translate(e);
        }
        finally
        {
            ReleaseGate(before);
        }
    }

    /// <summary>The pools with at least <paramref name="minFree"/> free workers, most free first (one call, no lease needed).</summary>
    public async Task<IReadOnlyList<WorkerPoolEntry>> ListPoolsAsync(int minFree, CancellationToken cancellationToken)
    {
        var request = new Proto.ListPoolsRequest { MinFree = minFree };
        Proto.ListPoolsReply reply;
        try
        {
            reply = await CallAsync(o => _client.ListPoolsAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            throw Translate(e);
        }

        var pools = new List<WorkerPoolEntry>(reply.Pools.Count);
        foreach (Proto.PoolEntry pool in reply.Pools)
        {
            pools.Add(NameProtocol.FromProto(pool));
        }

        return pools;
    }

    /// <summary>Looks a name up, waiting (holding no thread) until some program registers it.</summary>
    /// <exception cref="NameServerUnavailableException">The NameServer stayed unreachable for the NameServer timeout.</exception>
    /// <exception cref="ObjectDisposedException">The client was disposed before the name was registered.</exception>
    public async Task<NameEntry> ResolveAsync(string name, CancellationToken cancellationToken)
    {
        NameValidation.Name(name);
        ObjectDisposedException.ThrowIf(_disposed != 0, this);

        // Disposing the client ends a resolve in progress rather than leaving it to a dead channel.
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _disposing.Token);
        try
        {
            return await ResolveUntilRegisteredAsync(name, linked.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new ObjectDisposedException(nameof(NameServerClient), "The NameServer client was disposed while resolving '" + name + "'.");
        }
    }

    private async Task<NameEntry> ResolveUntilRegisteredAsync(string name, CancellationToken cancellationToken)
    {
        var request = new Proto.ResolveRequest { Name = name, WaitMs = (long)_options.ResolveWait.TotalMilliseconds };

        // The deadline leaves the server time to answer DEADLINE_EXCEEDED itself after its wait.
        TimeSpan deadline = _options.ResolveWait + _options.CallTimeout;
        TimeSpan pause = _options.InitialBackoff;
        while (true)
        {
            long started = _time.GetTimestamp();
            try
            {
                Proto.ResolveReply reply = await CallAsync(o => _client.ResolveAsync(request, o), deadline, cancellationToken).ConfigureAwait(false);
                return NameProtocol.FromProto(reply.Entry);
            }
            catch (RpcException e) when (e.StatusCode is StatusCode.DeadlineExceeded or StatusCode.NotFound)
            {
                // The wait ended before anyone registered the name: ask again. A server whose
                // maximum wait is far below ours answers at once; pause then, so as not to spin.
                if (_time.GetElapsedTime(started) < _options.ResolveWait / 2)
                {
                    await Task.Delay(pause, _time, cancellationToken).ConfigureAwait(false);
                    pause = TimeSpan.FromTicks(Math.Min(pause.Ticks * 2, _options.MaxBackoff.Ticks));
                }
            }
            catch (RpcException e)
            {
                throw Translate(e);
            }
        }
    }

    /// <summary>Renews the lease once; on NOT_FOUND opens a new lease and registers every name again.</summary>
    /// <remarks>The renewal loop's step; tests call it to renew at a moment of their choosing.</remarks>
    internal async Task RenewOnceAsync(CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        string? before = _leaseId;
        try
        {
            try
            {
                var request = new Proto.RenewRequest { LeaseId = Incarnation };
                Proto.RenewReply reply = await CallAsync(o => _client.RenewAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
                _ttl = TimeToLive(reply.TtlMs);
                if (_reregistrationPending)
                {
                    await RegisterAllLockedAsync(cancellationToken).ConfigureAwait(false);
                }
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.NotFound)
            {
                await ReopenLeaseLockedAsync(cancellationToken).ConfigureAwait(false);
            }
        }
        finally
        {
            ReleaseGate(before);
        }
    }

    /// <summary>Stops renewing and closes the lease, so the program's names disappear at once.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _disposing.CancelAsync().ConfigureAwait(false);
        await _renewLoop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await _gate.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_leaseId is { } leaseId)
            {
                // One attempt: a NameServer that is down will expire the lease by itself.
                var request = new Proto.CloseLeaseRequest { LeaseId = leaseId };
                await _client.CloseLeaseAsync(request, deadline: DateTime.UtcNow + _options.CallTimeout).ResponseAsync.ConfigureAwait(false);
            }
        }
        catch (RpcException e)
        {
            LogCloseFailed(_logger, NameServer, e.Status.StatusCode);
        }
        finally
        {
            _gate.Release();

            // _disposing stays undisposed: a resolve that is ending may still link to its token.
            _channel.Dispose();
        }
    }

    private async Task RenewLoopAsync(CancellationToken cancellationToken)
    {
        bool failed = false;
        while (true)
        {
            // A third of the time to live, as the protocol asks; after a failure, a sixth, so a
            // short outage still leaves another try before the lease expires.
            TimeSpan interval = _ttl / (failed ? 6 : 3);
            try
            {
                await Task.Delay(interval, _time, cancellationToken).ConfigureAwait(false);
                await RenewOnceAsync(cancellationToken).ConfigureAwait(false);
                failed = false;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is RpcException or NameServerUnavailableException)
            {
                failed = true;
                LogRenewFailed(_logger, NameServer, e.Message);
            }
        }
    }

    private async Task OpenLeaseLockedAsync(CancellationToken cancellationToken)
    {
        var request = new Proto.OpenLeaseRequest { Endpoint = NameProtocol.ToProto(_link), Program = _programLabel };
        Proto.OpenLeaseReply reply;
        try
        {
            reply = await CallAsync(o => _client.OpenLeaseAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            throw Translate(e);
        }

        _ttl = TimeToLive(reply.TtlMs);
        _leaseId = reply.LeaseId;
        LogLeaseOpened(_logger, Incarnations.Of(reply.LeaseId), NameServer, _ttl);
    }

    private async Task ReopenLeaseLockedAsync(CancellationToken cancellationToken)
    {
        LogLeaseLost(_logger, PublicIncarnation, NameServer, _registered.Count);
        await OpenLeaseLockedAsync(cancellationToken).ConfigureAwait(false);
        await RegisterAllLockedAsync(cancellationToken).ConfigureAwait(false);
    }

    private async Task RegisterAllLockedAsync(CancellationToken cancellationToken)
    {
        // Pending until every name is back: a failure part-way is finished by the next renewal.
        // Registering a name again under the same lease is harmless, so a repeat costs nothing.
        _reregistrationPending = true;
        foreach (NameEntry entry in new List<NameEntry>(_registered.Values))
        {
            try
            {
                await RegisterLockedAsync(entry, returnExisting: false, cancellationToken).ConfigureAwait(false);
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.AlreadyExists)
            {
                // Another program took the name while this one's lease was gone; it is theirs now.
                _registered.Remove(entry.Name);
                LogNameLost(_logger, entry.Name, e.Status.Detail);
            }
        }

        if (_pool is not null)
        {
            await RegisterPoolLockedAsync(cancellationToken).ConfigureAwait(false);
        }

        _reregistrationPending = false;
    }

    private async Task<WorkerPoolEntry> RegisterPoolLockedAsync(CancellationToken cancellationToken)
    {
        var request = new Proto.RegisterPoolRequest { LeaseId = Incarnation, Pool = NameProtocol.ToProto(_pool!) };
        Proto.RegisterPoolReply reply = await CallAsync(o => _client.RegisterPoolAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
        return NameProtocol.FromProto(reply.Pool);
    }

    private Task<Proto.RegisterReply> RegisterLockedAsync(NameEntry entry, bool returnExisting, CancellationToken cancellationToken)
    {
        var request = new Proto.RegisterRequest { LeaseId = Incarnation, Entry = NameProtocol.ToProto(entry), ReturnExisting = returnExisting };
        return CallAsync(o => _client.RegisterAsync(request, o), _options.CallTimeout, cancellationToken);
    }

    /// <summary>Makes one call, retrying while the NameServer is unreachable; other failures are thrown as they come.</summary>
    private async Task<TReply> CallAsync<TReply>(Func<CallOptions, AsyncUnaryCall<TReply>> call, TimeSpan timeout, CancellationToken cancellationToken)
    {
        long? unreachableSince = null;

        // The first retry is immediate: the usual failure after a NameServer restart is a pooled
        // connection the old server closed, and a new connection succeeds at once.
        TimeSpan backoff = TimeSpan.Zero;
        while (true)
        {
            var options = new CallOptions(deadline: DateTime.UtcNow + timeout, cancellationToken: cancellationToken);
            try
            {
                return await call(options).ResponseAsync.ConfigureAwait(false);
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.Cancelled && cancellationToken.IsCancellationRequested)
            {
                throw new OperationCanceledException(e.Status.Detail, e, cancellationToken);
            }
            catch (RpcException e) when (IsUnreachable(e))
            {
                long now = _time.GetTimestamp();
                unreachableSince ??= now;
                if (_time.GetElapsedTime(unreachableSince.Value, now) >= _options.NameServerTimeout)
                {
                    throw new NameServerUnavailableException(
                        $"Program '{_programLabel}' cannot reach the NameServer at {NameServer} (no answer for {_options.NameServerTimeout.TotalSeconds:0.###} s). " +
                        "Check that a NameServer runs there (cspnet-nameserver --port PORT, or NameServerHost) and that CspNodeOptions.NameServer " +
                        "(or CspManager.Init's nameServerPort and nameServerIp) names its address; the transport's own error is the inner exception.", e);
                }

                LogRetrying(_logger, NameServer, backoff, e.Status.Detail);
                await Task.Delay(backoff, _time, cancellationToken).ConfigureAwait(false);
                backoff = backoff == TimeSpan.Zero ? _options.InitialBackoff : TimeSpan.FromTicks(Math.Min(backoff.Ticks * 2, _options.MaxBackoff.Ticks));
            }
        }
    }

    /// <summary>The lease's time to live as the server gave it, within the range the server may configure.</summary>
    /// <remarks>A time to live of 0 would make the renewal loop spin; the server never sends one, but a client must not trust that.</remarks>
    private static TimeSpan TimeToLive(long ms) => TimeSpan.FromMilliseconds(Math.Clamp(ms, 100, 86_400_000));

    /// <summary>Whether a call failed for want of a NameServer rather than by its answer.</summary>
    /// <remarks>
    /// grpc-dotnet reports a refused connection as UNAVAILABLE but a connection the server closed
    /// under the call (it stopped or restarted) as INTERNAL with the HTTP failure attached.
    /// </remarks>
    private static bool IsUnreachable(RpcException e) =>
        e.StatusCode == StatusCode.Unavailable
        || (e.StatusCode == StatusCode.Internal && e.Status.DebugException is HttpRequestException or IOException);

    /// <summary>Turns a status the caller cannot handle into the exception the public surface documents.</summary>
    private Exception Translate(RpcException e) => e.StatusCode switch
    {
        StatusCode.InvalidArgument => new ArgumentException(e.Status.Detail, e),
        StatusCode.AlreadyExists => new NameAlreadyRegisteredException(e.Status.Detail, e),
        StatusCode.NotFound => new LeaseNotFoundException(e.Status.Detail, e),
        StatusCode.ResourceExhausted => new NameServerCapacityExceededException(e.Status.Detail, e),
        _ => new NameServerUnavailableException($"The NameServer at {NameServer} failed the call with {e.StatusCode}: {e.Status.Detail}", e),
    };

    /// <summary>Leaves the gate; then, if the lease changed while it was held, says so (off the gate, so handlers may call back).</summary>
    private void ReleaseGate(string? leaseBefore)
    {
        string? leaseAfter = _leaseId;
        _gate.Release();
        if (leaseBefore is not null && leaseAfter is not null && leaseAfter != leaseBefore)
        {
            IncarnationChanged?.Invoke(leaseBefore, leaseAfter);
        }
    }

    [LoggerMessage(20, LogLevel.Information, "Lease of incarnation {Incarnation} opened at the NameServer {NameServer} (time to live {Ttl})")]
    private static partial void LogLeaseOpened(ILogger logger, string incarnation, Uri nameServer, TimeSpan ttl);

    [LoggerMessage(21, LogLevel.Warning, "Lease of incarnation {Incarnation} is gone at the NameServer {NameServer} (restarted, or the lease expired); opening a new one and registering {NameCount} names again")]
    private static partial void LogLeaseLost(ILogger logger, string incarnation, Uri nameServer, int nameCount);

    [LoggerMessage(22, LogLevel.Warning, "The name '{Name}' could not be registered again: {Detail}")]
    private static partial void LogNameLost(ILogger logger, string name, string detail);

    [LoggerMessage(23, LogLevel.Warning, "Renewing the lease at the NameServer {NameServer} failed: {Message}")]
    private static partial void LogRenewFailed(ILogger logger, Uri nameServer, string message);

    [LoggerMessage(24, LogLevel.Debug, "The NameServer {NameServer} is unreachable; retrying in {Backoff}: {Detail}")]
    private static partial void LogRetrying(ILogger logger, Uri nameServer, TimeSpan backoff, string detail);

    [LoggerMessage(25, LogLevel.Debug, "Closing the lease at the NameServer {NameServer} failed with {Status}; it will expire")]
    private static partial void LogCloseFailed(ILogger logger, Uri nameServer, StatusCode status);
}
