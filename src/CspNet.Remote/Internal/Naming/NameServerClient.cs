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
/// This file holds the calls a program makes (register, resolve, pools) and the retry policy
/// every call shares; keeping the lease (opening, renewing, re-registering after it was lost) is
/// in NameServerClient.Lease.cs. Calls under the lease are serialised by one gate, so a
/// re-registration never races a registration.
/// </para>
/// <para>
/// Every call retries while the NameServer is unreachable, with exponential back-off, and gives
/// up with <see cref="NameServerUnavailableException"/> once it has been unreachable for
/// <see cref="NameServerClientOptions.NameServerTimeout"/> without a break.
/// </para>
/// <para>
/// Given replicas (<see cref="NameServerClientOptions.Replicas"/>), a call that finds its
/// NameServer unreachable moves to the next address at once, and backs off only after every
/// address has failed in turn. Replicas on one etcd share the lease, so renewals go on where they
/// were; an unshared replica answers NOT_FOUND and the client registers its names there again,
/// as after a restart.
/// </para>
/// </remarks>
internal sealed partial class NameServerClient : IAsyncDisposable
{
    private readonly Replica[] _replicas;

    // The replica calls go to; moved on (never back) when one is found unreachable.
    private int _current;
    private readonly LinkEndpoint _link;
    private readonly string _programLabel;
    private readonly NameServerClientOptions _options;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly SemaphoreSlim _gate = new(1, 1);
    private readonly CancellationTokenSource _disposing = new();

    private int _disposed;

    public NameServerClient(Uri nameServer, LinkEndpoint link, string programLabel, NameServerClientOptions? options = null)
    {
        CheckAddress(nameServer, nameof(nameServer));
        NameValidation.Endpoint(link, nameof(link));
        NameValidation.ProgramLabel(programLabel);
        _link = link;
        _programLabel = programLabel;
        _options = options ?? new NameServerClientOptions();
        _time = _options.TimeProvider;
        _logger = _options.LoggerFactory?.CreateLogger<NameServerClient>() ?? (ILogger)NullLogger.Instance;
        var addresses = new List<Uri>(1 + _options.Replicas.Count) { nameServer };
        foreach (Uri replica in _options.Replicas)
        {
            CheckAddress(replica, nameof(options));
            if (!addresses.Contains(replica))
            {
                addresses.Add(replica);
            }
        }

        if (addresses.Count > 1 && _options.HttpHandler is not null)
        {
            throw new ArgumentException("A NameServerClient with replicas creates one HTTP handler per replica: leave HttpHandler unset.", nameof(options));
        }

        _replicas = addresses.ConvertAll(CreateReplica).ToArray();
    }

    private Replica CreateReplica(Uri address)
    {
        HttpMessageHandler handler = _options.HttpHandler ?? new SocketsHttpHandler
        {
            // A NameServer that is down must fail a call quickly, so that the retry loop decides.
            ConnectTimeout = _options.CallTimeout,
            EnableMultipleHttp2Connections = true,
            PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan,

            // A NameServer host that vanished (cut off, powered down) never closes the connection:
            // pings find it, so a call waiting on it fails and moves to a replica.
            KeepAlivePingDelay = _options.CallTimeout,
            KeepAlivePingTimeout = _options.CallTimeout,
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.Always,
            SslOptions = _options.TrustedCertificate is { } trusted
                ? Security.Certificates.ClientOptions(trusted, _options.Certificate)
                : new System.Net.Security.SslClientAuthenticationOptions(),
        };

        // No key configured: this user's own, as the NameServer's default is.
        string key = Security.ClusterKeys.Effective(_options.ClusterKey);
        if (!Security.Certificates.MayCarrySecrets(address))
        {
            throw new ArgumentException(
                $"The NameServer {address} is on another machine over plain HTTP: the cluster key would travel in clear text. Serve the NameServer over TLS and dial it as https://.",
                nameof(address));
        }

        handler = new ClusterKeyHandler(key, handler);
        var channel = GrpcChannel.ForAddress(address, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            LoggerFactory = _options.LoggerFactory,

            // Not ThrowOperationCanceledOnCancellation: it turns DEADLINE_EXCEEDED into an
            // OperationCanceledException too, and Resolve's DEADLINE_EXCEEDED means "ask again".
        });
        return new Replica(address, channel, new Proto.NameServer.NameServerClient(channel));
    }

    private static void CheckAddress(Uri address, string parameter)
    {
        ArgumentNullException.ThrowIfNull(address, parameter);
        if (!address.IsAbsoluteUri || (address.Scheme != Uri.UriSchemeHttp && address.Scheme != Uri.UriSchemeHttps))
        {
            throw new ArgumentException($"The NameServer address '{address}' is not an absolute http:// or https:// address.", parameter);
        }
    }

    /// <summary>Raised, off the gate, when the client had to open a new lease (old, new incarnation); it has registered its names again, or will at the next renewal if that failed part-way.</summary>
    public event Action<string, string>? IncarnationChanged;

    /// <summary>
    /// Raised, off the gate, when a name this program had registered could not be registered again
    /// under a new lease because another program holds it now (name, the NameServer's detail).
    /// </summary>
    public event Action<string, string>? NameLost;

    /// <summary>The address of the NameServer (replica) calls go to now.</summary>
    public Uri NameServer => _replicas[Volatile.Read(ref _current)].Address;

    /// <summary>The gRPC client of the replica calls go to now.</summary>
    private Proto.NameServer.NameServerClient CurrentClient => _replicas[Volatile.Read(ref _current)].Client;

    /// <summary>This program's incarnation: its current lease id.</summary>
    /// <exception cref="InvalidOperationException">The client has not started.</exception>
    public string Incarnation => _leaseId ?? throw new InvalidOperationException("The NameServer client has not started.");

    /// <summary>The incarnation other programs see in this program's entries (derived from the lease id, which stays secret).</summary>
    public string PublicIncarnation => Incarnations.Of(Incarnation);

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
            for (int attempt = 1; ; attempt++)
            {
                try
                {
                    reply = await RegisterLockedAsync(entry, returnExisting, cancellationToken).ConfigureAwait(false);
                    break;
                }
                catch (RpcException e) when (e.StatusCode == StatusCode.NotFound)
                {
                    // The lease is gone where the call went; a lease just opened can be gone too, when
                    // the call failed over to a replica with a table of its own: open one there.
                    if (attempt == LeaseOpeningsInARow)
                    {
                        throw LeaseLostAgain(e);
                    }

                    await ReopenLeaseLockedAsync(cancellationToken).ConfigureAwait(false);
                }
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
            await CallAsync(o => CurrentClient.UnregisterAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
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

    /// <summary>
    /// Moves a name this program registered to the program of incarnation
    /// <paramref name="toIncarnation"/> (which took it with <see cref="AdoptAsync"/> first), in one step at the
    /// NameServer; this program no longer registers it again after a lost lease.
    /// </summary>
    /// <returns>The entry as it is registered now.</returns>
    /// <exception cref="NameMoveRefusedException">The name is not this program's, or the other program is gone.</exception>
    /// <exception cref="LeaseNotFoundException">This program's lease is gone, and the name with it.</exception>
    public async Task<NameEntry> MoveAsync(string name, string toIncarnation, CancellationToken cancellationToken)
    {
        NameValidation.Name(name);
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var request = new Proto.MoveNameRequest { LeaseId = Incarnation, Name = name, ToIncarnation = toIncarnation };
            Proto.MoveNameReply reply = await CallAsync(o => CurrentClient.MoveNameAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
            _registered.Remove(name);
            return NameProtocol.FromProto(reply.Entry);
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.FailedPrecondition)
        {
            throw new NameMoveRefusedException(e.Status.Detail, e);
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

    /// <summary>
    /// Remembers a name another program is moving to this one (<see cref="MoveAsync"/>), so that
    /// it is registered again with the others after a lost lease.
    /// </summary>
    public async Task AdoptAsync(NameEntry entry, CancellationToken cancellationToken)
    {
        NameValidation.Entry(entry);
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            _registered[entry.Name] = entry;
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
                await CallAsync(o => CurrentClient.UpdatePoolAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
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
            reply = await CallAsync(o => CurrentClient.ListPoolsAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
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
                Proto.ResolveReply reply = await CallAsync(o => CurrentClient.ResolveAsync(request, o), deadline, cancellationToken, answerWaits: true).ConfigureAwait(false);
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

    /// <summary>Stops renewing and closes the lease, so the program's names disappear at once.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _disposing.CancelAsync().ConfigureAwait(false);
        await _renewLoop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);

        // A call under the gate ends within its own bounds; if it has not by then, leave without
        // closing the lease (it expires by itself) rather than wait on it.
        bool gated = await _gate.WaitAsync(_options.CallTimeout + _options.NameServerTimeout).ConfigureAwait(false);
        try
        {
            if (!gated)
            {
                return;
            }

            if (_leaseId is { } leaseId)
            {
                // One attempt: a NameServer that is down will expire the lease by itself.
                var request = new Proto.CloseLeaseRequest { LeaseId = leaseId };
                await CurrentClient.CloseLeaseAsync(request, deadline: DateTime.UtcNow + _options.CallTimeout).ResponseAsync.ConfigureAwait(false);
            }
        }
        catch (RpcException e)
        {
            LogCloseFailed(_logger, NameServer, e.Status.StatusCode);
        }
        finally
        {
            if (gated)
            {
                _gate.Release();
            }

            // _disposing stays undisposed: a resolve that is ending may still link to its token.
            foreach (Replica replica in _replicas)
            {
                replica.Channel.Dispose();
            }
        }
    }

    private async Task<WorkerPoolEntry> RegisterPoolLockedAsync(CancellationToken cancellationToken)
    {
        var request = new Proto.RegisterPoolRequest { LeaseId = Incarnation, Pool = NameProtocol.ToProto(_pool!) };
        Proto.RegisterPoolReply reply = await CallAsync(o => CurrentClient.RegisterPoolAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
        return NameProtocol.FromProto(reply.Pool);
    }

    private Task<Proto.RegisterReply> RegisterLockedAsync(NameEntry entry, bool returnExisting, CancellationToken cancellationToken)
    {
        var request = new Proto.RegisterRequest { LeaseId = Incarnation, Entry = NameProtocol.ToProto(entry), ReturnExisting = returnExisting };
        return CallAsync(o => CurrentClient.RegisterAsync(request, o), _options.CallTimeout, cancellationToken);
    }

    /// <summary>Makes one call, retrying while the NameServer is unreachable; other failures are thrown as they come.</summary>
    /// <remarks>
    /// A call whose answer does not wait (<paramref name="answerWaits"/> false) and misses its
    /// deadline found no NameServer either: the host may be cut off with the connection still open.
    /// </remarks>
    private async Task<TReply> CallAsync<TReply>(Func<CallOptions, AsyncUnaryCall<TReply>> call, TimeSpan timeout, CancellationToken cancellationToken, bool answerWaits = false)
    {
        long? unreachableSince = null;

        // The first retry is immediate: the usual failure after a NameServer restart is a pooled
        // connection the old server closed, and a new connection succeeds at once.
        TimeSpan backoff = TimeSpan.Zero;

        // Replicas tried in a row without an answer: back off only once every one has failed.
        int failedInRound = 0;
        while (true)
        {
            var options = new CallOptions(deadline: DateTime.UtcNow + timeout, cancellationToken: cancellationToken);
            int replica = Volatile.Read(ref _current);
            try
            {
                return await call(options).ResponseAsync.ConfigureAwait(false);
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.Cancelled && cancellationToken.IsCancellationRequested)
            {
                throw new OperationCanceledException(e.Status.Detail, e, cancellationToken);
            }
            catch (RpcException e) when (IsUnreachable(e) || (e.StatusCode == StatusCode.DeadlineExceeded && !answerWaits && !cancellationToken.IsCancellationRequested))
            {
                long now = _time.GetTimestamp();
                unreachableSince ??= now;
                if (_time.GetElapsedTime(unreachableSince.Value, now) >= _options.NameServerTimeout)
                {
                    throw new NameServerUnavailableException(
                        $"Program '{_programLabel}' cannot reach the NameServer at {Addresses()} (no answer for {_options.NameServerTimeout.TotalSeconds:0.###} s). " +
                        "Check that a NameServer runs there (cspnet-nameserver --port PORT, or NameServerHost) and that CspNodeOptions.NameServer " +
                        "(or CspManager.Init's nameServerPort and nameServerIp) names its address; the transport's own error is the inner exception.", e);
                }

                if (_replicas.Length > 1)
                {
                    // Another call may have moved on already; move only from the replica that failed.
                    int next = (replica + 1) % _replicas.Length;
                    if (Interlocked.CompareExchange(ref _current, next, replica) == replica)
                    {
                        LogFailedOver(_logger, _replicas[replica].Address, _replicas[next].Address, e.Status.Detail);
                    }

                    if (++failedInRound < _replicas.Length)
                    {
                        continue;
                    }

                    failedInRound = 0;
                }

                LogRetrying(_logger, NameServer, backoff, e.Status.Detail);
                await Task.Delay(backoff, _time, cancellationToken).ConfigureAwait(false);
                backoff = backoff == TimeSpan.Zero ? _options.InitialBackoff : TimeSpan.FromTicks(Math.Min(backoff.Ticks * 2, _options.MaxBackoff.Ticks));
            }
        }
    }

    /// <summary>Whether a call failed for want of a NameServer rather than by its answer.</summary>
    /// <remarks>
    /// grpc-dotnet reports a refused connection as UNAVAILABLE but a connection the server closed
    /// under the call (it stopped or restarted) as INTERNAL with the HTTP failure attached, and a
    /// connection the handler tore down under the call (a keep-alive ping unanswered in time, as
    /// on a machine too loaded to answer) as INTERNAL with the connection's content or stream
    /// already disposed. A connection not established within the handler's ConnectTimeout (a
    /// NameServer too loaded to accept or finish the TLS handshake in time) comes as CANCELLED,
    /// though nobody cancelled the call, with a <see cref="TimeoutException"/> inside. Each says
    /// nothing about the call itself: it is tried again.
    /// </remarks>
    private static bool IsUnreachable(RpcException e) =>
        e.StatusCode == StatusCode.Unavailable
        || (e.StatusCode == StatusCode.Internal && e.Status.DebugException is HttpRequestException or IOException or ObjectDisposedException)
        || (e.StatusCode == StatusCode.Cancelled && IsConnectTimeout(e.Status.DebugException));

    private static bool IsConnectTimeout(Exception? e)
    {
        for (; e is not null; e = e.InnerException)
        {
            if (e is TimeoutException)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Turns a status the caller cannot handle into the exception the public surface documents.</summary>
    private Exception Translate(RpcException e) => e.StatusCode switch
    {
        StatusCode.InvalidArgument => new ArgumentException(e.Status.Detail, e),
        StatusCode.AlreadyExists => new NameAlreadyRegisteredException(e.Status.Detail, e),
        StatusCode.NotFound => new LeaseNotFoundException(e.Status.Detail, e),
        StatusCode.ResourceExhausted => new NameServerCapacityExceededException(e.Status.Detail, e),
        _ => new NameServerUnavailableException($"The NameServer at {NameServer} failed the call with {e.StatusCode}: {e.Status.Detail}", e),
    };

    /// <summary>Every address this client may call, for messages.</summary>
    private string Addresses() => string.Join(" or ", Array.ConvertAll(_replicas, r => r.Address.ToString()));

    [LoggerMessage(26, LogLevel.Warning, "The NameServer {From} is unreachable; calls go to its replica {To} now: {Detail}")]
    private static partial void LogFailedOver(ILogger logger, Uri from, Uri to, string detail);

    /// <summary>One NameServer address with its channel.</summary>
    private sealed record Replica(Uri Address, GrpcChannel Channel, Proto.NameServer.NameServerClient Client);

    [LoggerMessage(24, LogLevel.Debug, "The NameServer {NameServer} is unreachable; retrying in {Backoff}: {Detail}")]
    private static partial void LogRetrying(ILogger logger, Uri nameServer, TimeSpan backoff, string detail);

    [LoggerMessage(25, LogLevel.Debug, "Closing the lease at the NameServer {NameServer} failed with {Status}; it will expire")]
    private static partial void LogCloseFailed(ILogger logger, Uri nameServer, StatusCode status);
}
