using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net.Http;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Diagnostics;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;
using dotnet_etcd;
using dotnet_etcd.interfaces;
using Etcdserverpb;
using Google.Protobuf;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Mvccpb;

namespace CspNet.NameServer.Etcd;

/// <summary>
/// A NameServer table kept in etcd, so that several NameServer processes on the same etcd (and
/// <see cref="EtcdNameRegistryOptions.Prefix"/>) are interchangeable: a program may open its lease
/// through one and renew it, register and resolve through any other.
/// </summary>
/// <remarks>
/// <para>
/// Each program lease is an etcd lease with the NameServer's lease time to live (rounded up to
/// whole seconds, etcd's unit); its record, its names and its worker pool are keys attached to
/// it, so etcd itself removes them all, atomically, when the lease expires or is revoked. A name
/// is registered only if absent, by a transaction comparing the key's create revision with 0.
/// A Resolve that waits watches the name's key from the revision it read, so a registration
/// made in between is never missed, and holds no thread. Nothing lives in this process's memory
/// but the connection: the key layout and failure behaviour are in docs/NAMESERVER.md.
/// </para>
/// <para>
/// Errors are those of <see cref="INameRegistry"/>; when etcd does not answer within
/// <see cref="EtcdNameRegistryOptions.OperationTimeout"/>, has no quorum or refuses the
/// credentials, calls fail with <see cref="EtcdRegistryUnavailableException"/>.
/// </para>
/// <para>Thread-safety: all members are safe to call from any thread.</para>
/// </remarks>
public sealed partial class EtcdNameRegistry : INameRegistry, IDisposable
{
    private const string LeasesPart = "leases/";
    private const string NamesPart = "names/";
    private const string PoolsPart = "pools/";

    // How long a count of the names stays good for the MaxNames check: counting is a scan of
    // etcd's index, too dear for every registration of a large table.
    private static readonly TimeSpan NameCountLifetime = TimeSpan.FromSeconds(1);

    private readonly EtcdClient _client;
    private readonly IConnection _etcd;
    private readonly string _prefix;
    private readonly string _endpoints;
    private readonly TimeSpan _operationTimeout;
    private readonly int _endpointCount;
    private readonly long _leaseTtlSeconds;
    private readonly TimeSpan _maxResolveWait;
    private readonly int _maxLeases;
    private readonly int _maxNames;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _disposing = new();
    private readonly Lock _countLock = new();
    private long _countedNames;
    private long _namesAddedSinceCount;
    private long _namesCountedAt = long.MinValue;
    private int _disposed;

    /// <summary>Creates a registry on the etcd cluster that <paramref name="etcd"/> names; connects lazily, at the first call.</summary>
    /// <param name="etcd">Where etcd is and how to authenticate.</param>
    /// <param name="options">Lease time to live, maximum resolve wait and limits; defaults when <see langword="null"/>.</param>
    /// <param name="timeProvider">The clock for resolve waits; <see cref="TimeProvider.System"/> when <see langword="null"/>.</param>
    /// <param name="logger">Logs leases opening and closing, and etcd failures; nothing when <see langword="null"/>.</param>
    /// <exception cref="ArgumentException">An option is malformed or out of range, or the password cannot be read.</exception>
    public EtcdNameRegistry(EtcdNameRegistryOptions etcd, NameServerOptions? options = null, TimeProvider? timeProvider = null, ILogger<EtcdNameRegistry>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(etcd);
        etcd.Validate();
        options ??= new NameServerOptions();
        options.Validate();
        _prefix = etcd.Prefix;
        _endpoints = etcd.Endpoints;
        _operationTimeout = etcd.OperationTimeout;
        _endpointCount = etcd.EndpointUris().Count;
        _leaseTtlSeconds = (long)Math.Ceiling(options.LeaseTtl.TotalSeconds);
        _maxResolveWait = options.MaxResolveWait;
        _maxLeases = options.MaxLeases;
        _maxNames = options.MaxNames;
        _time = timeProvider ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        _client = EtcdConnection.Create(etcd);
        _etcd = _client.GetConnection();
    }

    /// <inheritdoc />
    public Task<NameLease> OpenLeaseAsync(LinkEndpoint endpoint, string programLabel, CancellationToken cancellationToken = default)
    {
        NameValidation.Endpoint(endpoint);
        NameValidation.ProgramLabel(programLabel);
        return RunAsync("OpenLease", async (options) =>
        {
            long leases = (await _etcd.KVClient.RangeAsync(CountRequest(LeasesPart), options).ConfigureAwait(false)).Count;
            if (leases >= _maxLeases)
            {
                throw new NameServerCapacityExceededException($"The NameServer holds {leases} leases, its limit.");
            }

            LeaseGrantResponse grant = await _etcd.LeaseClient.LeaseGrantAsync(new LeaseGrantRequest { TTL = _leaseTtlSeconds }, options).ConfigureAwait(false);
            string id = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));
            var record = new LeaseRecord(grant.ID, endpoint.Host, endpoint.Port, programLabel, _time.GetUtcNow().ToUnixTimeMilliseconds());
            try
            {
                await _etcd.KVClient.PutAsync(new PutRequest { Key = Key(LeasesPart, Incarnations.Of(id)), Value = Json(record, EtcdRecordsJson.Default.LeaseRecord), Lease = grant.ID }, options).ConfigureAwait(false);
            }
            catch
            {
                // Without its record the lease is useless: give it back rather than let it run out.
                _ = RevokeQuietlyAsync(grant.ID);
                throw;
            }

            LogLeaseOpened(_logger, Incarnations.Of(id), programLabel, endpoint, grant.ID);
            return new NameLease(id, TimeSpan.FromSeconds(grant.TTL));
        }, cancellationToken);
    }

    /// <inheritdoc />
    public Task<TimeSpan> RenewAsync(string leaseId, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        return RunAsync("Renew", async (options) =>
        {
            LeaseRecord lease = await LiveLeaseAsync(leaseId, options).ConfigureAwait(false);

            // etcd renews only over its keep-alive stream: one request, one answer.
            using AsyncDuplexStreamingCall<LeaseKeepAliveRequest, LeaseKeepAliveResponse> call = _etcd.LeaseClient.LeaseKeepAlive(options);
            await call.RequestStream.WriteAsync(new LeaseKeepAliveRequest { ID = lease.EtcdLease }, options.CancellationToken).ConfigureAwait(false);
            await call.RequestStream.CompleteAsync().ConfigureAwait(false);
            if (!await call.ResponseStream.MoveNext(options.CancellationToken).ConfigureAwait(false))
            {
                throw new RpcException(new Status(StatusCode.Unavailable, "etcd closed the keep-alive stream without an answer"));
            }

            long ttl = call.ResponseStream.Current.TTL;
            return ttl > 0 ? TimeSpan.FromSeconds(ttl) : throw UnknownLease(leaseId);
        }, cancellationToken);
    }

    /// <inheritdoc />
    public Task CloseLeaseAsync(string leaseId, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        return RunAsync("CloseLease", async (options) =>
        {
            LeaseRecord lease = await LiveLeaseAsync(leaseId, options).ConfigureAwait(false);

            // Revoking deletes every key attached to the lease in one step: its names go at once.
            await _etcd.LeaseClient.LeaseRevokeAsync(new LeaseRevokeRequest { ID = lease.EtcdLease }, options).ConfigureAwait(false);
            LogLeaseClosed(_logger, Incarnations.Of(leaseId), lease.Program);
            return true;
        }, cancellationToken);
    }

    /// <inheritdoc />
    public Task<NameRegistration> RegisterAsync(string leaseId, NameEntry entry, bool returnExisting, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        NameValidation.Entry(entry);
        return RunAsync("Register", async (options) =>
        {
            string incarnation = Incarnations.Of(leaseId);
            LeaseRecord lease = await LiveLeaseAsync(leaseId, options).ConfigureAwait(false);
            await CheckNameCapacityAsync(options).ConfigureAwait(false);
            NameEntry registered = entry with { Endpoint = new LinkEndpoint(lease.Host, lease.Port), Incarnation = incarnation };
            var record = new NameRecord(entry.Kind.ToString(), entry.ValueType, entry.BufferCapacity, lease.Host, lease.Port, incarnation, lease.Program);
            ByteString nameKey = Key(NamesPart, entry.Name);
            ByteString leaseKey = Key(LeasesPart, incarnation);

            // Put only if the name is absent and the lease still exists; otherwise read both, to say which.
            var txn = new TxnRequest
            {
                Compare =
                {
                    new Compare { Key = leaseKey, Target = Compare.Types.CompareTarget.Create, Result = Compare.Types.CompareResult.Greater, CreateRevision = 0 },
                    new Compare { Key = nameKey, Target = Compare.Types.CompareTarget.Create, Result = Compare.Types.CompareResult.Equal, CreateRevision = 0 },
                },
                Success = { new RequestOp { RequestPut = new PutRequest { Key = nameKey, Value = Json(record, EtcdRecordsJson.Default.NameRecord), Lease = lease.EtcdLease } } },
                Failure = { new RequestOp { RequestRange = new RangeRequest { Key = nameKey } }, new RequestOp { RequestRange = new RangeRequest { Key = leaseKey } } },
            };
            TxnResponse answer = await _etcd.KVClient.TxnAsync(txn, options).ConfigureAwait(false);
            if (answer.Succeeded)
            {
                Interlocked.Increment(ref _namesAddedSinceCount);
                RemoteMetrics.CountRegistration(registered.Kind.ToString());
                return new NameRegistration(registered, Created: true);
            }

            if (answer.Responses[1].ResponseRange.Kvs.Count == 0 || answer.Responses[0].ResponseRange.Kvs.Count == 0)
            {
                // The lease expired after it was read (or the name vanished with its lease).
                throw UnknownLease(leaseId);
            }

            (NameEntry existing, string owner) = ParseName(entry.Name, answer.Responses[0].ResponseRange.Kvs[0]);
            bool sameRegistration = existing.Incarnation == incarnation && existing.HasSameDefinition(entry);
            return sameRegistration || returnExisting
                ? new NameRegistration(existing, Created: false)
                : throw new NameAlreadyRegisteredException(existing, owner);
        }, cancellationToken);
    }

    /// <inheritdoc />
    public Task<bool> UnregisterAsync(string leaseId, string name, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        NameValidation.Name(name);
        return RunAsync("Unregister", async (options) =>
        {
            LeaseRecord lease = await LiveLeaseAsync(leaseId, options).ConfigureAwait(false);
            ByteString nameKey = Key(NamesPart, name);

            // Only a name attached to this lease is this program's to remove.
            var txn = new TxnRequest
            {
                Compare = { new Compare { Key = nameKey, Target = Compare.Types.CompareTarget.Lease, Result = Compare.Types.CompareResult.Equal, Lease = lease.EtcdLease } },
                Success = { new RequestOp { RequestDeleteRange = new DeleteRangeRequest { Key = nameKey } } },
            };
            TxnResponse answer = await _etcd.KVClient.TxnAsync(txn, options).ConfigureAwait(false);
            return answer.Succeeded && answer.Responses[0].ResponseDeleteRange.Deleted > 0;
        }, cancellationToken);
    }

    /// <inheritdoc />
    public Task<NameEntry> MoveAsync(string leaseId, string name, string toIncarnation, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        NameValidation.Name(name);
        NameValidation.Incarnation(toIncarnation, nameof(toIncarnation));
        return RunAsync("MoveName", async (options) =>
        {
            LeaseRecord lease = await LiveLeaseAsync(leaseId, options).ConfigureAwait(false);
            ByteString nameKey = Key(NamesPart, name);
            ByteString targetKey = Key(LeasesPart, toIncarnation);
            RangeResponse read = await _etcd.KVClient.RangeAsync(new RangeRequest { Key = targetKey }, options).ConfigureAwait(false);
            if (read.Kvs.Count == 0)
            {
                throw new NameMoveRefusedException($"The name '{name}' cannot move to incarnation {toIncarnation}: no live program has it (it left, or its lease expired).");
            }

            LeaseRecord target = Parse(read.Kvs[0], EtcdRecordsJson.Default.LeaseRecord);
            RangeResponse current = await _etcd.KVClient.RangeAsync(new RangeRequest { Key = nameKey }, options).ConfigureAwait(false);
            if (current.Kvs.Count == 0 || current.Kvs[0].Lease != lease.EtcdLease)
            {
                throw NotHeld(name, leaseId);
            }

            NameRecord record = Parse(current.Kvs[0], EtcdRecordsJson.Default.NameRecord) with { Host = target.Host, Port = target.Port, Incarnation = toIncarnation, Program = target.Program };

            // One transaction: the name is still this lease's, unchanged since read, and the target's
            // lease still lives; then the key is put under the target's lease (never absent in between).
            var txn = new TxnRequest
            {
                Compare =
                {
                    new Compare { Key = nameKey, Target = Compare.Types.CompareTarget.Mod, Result = Compare.Types.CompareResult.Equal, ModRevision = current.Kvs[0].ModRevision },
                    new Compare { Key = targetKey, Target = Compare.Types.CompareTarget.Create, Result = Compare.Types.CompareResult.Equal, CreateRevision = read.Kvs[0].CreateRevision },
                },
                Success = { new RequestOp { RequestPut = new PutRequest { Key = nameKey, Value = Json(record, EtcdRecordsJson.Default.NameRecord), Lease = target.EtcdLease } } },
            };
            TxnResponse answer = await _etcd.KVClient.TxnAsync(txn, options).ConfigureAwait(false);
            if (!answer.Succeeded)
            {
                // Changed between the reads and the transaction: the lease or the target went, or the name moved.
                throw NotHeld(name, leaseId);
            }

            return ParseName(name, current.Kvs[0]).Entry with { Endpoint = new LinkEndpoint(target.Host, target.Port), Incarnation = toIncarnation };
        }, cancellationToken);
    }

    private static NameMoveRefusedException NotHeld(string name, string leaseId) =>
        new($"The name '{name}' is not registered under the lease of incarnation {Incarnations.Of(leaseId)} (or the program it was to move to left meanwhile): only the program that holds a name moves it.");

    /// <inheritdoc />
    public async Task<NameEntry?> ResolveAsync(string name, TimeSpan maxWait, CancellationToken cancellationToken = default)
    {
        NameValidation.Name(name);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxWait, TimeSpan.Zero);
        if (maxWait > _maxResolveWait)
        {
            maxWait = _maxResolveWait;
        }

        // The wait counts from the call, the first read included.
        using CancellationTokenSource? timeout = maxWait > TimeSpan.Zero ? new CancellationTokenSource(maxWait, _time) : null;
        ByteString key = Key(NamesPart, name);
        (NameEntry? found, long revision) = await RunAsync("Resolve", async (options) =>
        {
            RangeResponse range = await _etcd.KVClient.RangeAsync(new RangeRequest { Key = key }, options).ConfigureAwait(false);
            return (range.Kvs.Count > 0 ? ParseName(name, range.Kvs[0]).Entry : null, range.Header.Revision);
        }, cancellationToken).ConfigureAwait(false);
        if (found is not null || timeout is null)
        {
            return found;
        }

        using var wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timeout.Token, _disposing.Token);
        try
        {
            return await WatchForNameAsync(name, key, revision + 1, wait.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or RpcException or ObjectDisposedException && !cancellationToken.IsCancellationRequested)
        {
            ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
            if (timeout.IsCancellationRequested)
            {
                return null;
            }

            throw e is RpcException rpc ? Translate(rpc, "Resolve") : e;
        }
    }

    /// <inheritdoc />
    public Task<WorkerPoolEntry> RegisterPoolAsync(string leaseId, WorkerPoolEntry pool, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        NameValidation.Pool(pool);
        return RunAsync("RegisterPool", async (options) =>
        {
            string incarnation = Incarnations.Of(leaseId);
            LeaseRecord lease = await LiveLeaseAsync(leaseId, options).ConfigureAwait(false);
            WorkerPoolEntry registered = pool with { Incarnation = incarnation };
            await _etcd.KVClient.PutAsync(new PutRequest { Key = Key(PoolsPart, incarnation), Value = Json(ToRecord(registered, lease.Program), EtcdRecordsJson.Default.PoolRecord), Lease = lease.EtcdLease }, options).ConfigureAwait(false);
            LogPoolRegistered(_logger, registered.Name, registered.Endpoint, registered.Workers, registered.FreeWorkers);
            return registered;
        }, cancellationToken);
    }

    /// <inheritdoc />
    public Task UpdatePoolAsync(string leaseId, int freeWorkers, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        return RunAsync("UpdatePool", async (options) =>
        {
            string incarnation = Incarnations.Of(leaseId);
            ByteString leaseKey = Key(LeasesPart, incarnation);
            ByteString poolKey = Key(PoolsPart, incarnation);
            while (true)
            {
                // The lease and its pool in one read, then a write that applies only to the pool read:
                // a RegisterPool racing this update is never overwritten with the old pool's fields.
                TxnResponse read = await _etcd.KVClient.TxnAsync(
                    new TxnRequest { Success = { new RequestOp { RequestRange = new RangeRequest { Key = leaseKey } }, new RequestOp { RequestRange = new RangeRequest { Key = poolKey } } } },
                    options).ConfigureAwait(false);
                if (read.Responses[0].ResponseRange.Kvs.Count == 0)
                {
                    throw UnknownLease(leaseId);
                }

                if (read.Responses[1].ResponseRange.Kvs.Count == 0)
                {
                    throw new LeaseNotFoundException($"No worker pool is registered under the lease of incarnation {Incarnations.Of(leaseId)}: register it again.");
                }

                KeyValue stored = read.Responses[1].ResponseRange.Kvs[0];
                PoolRecord pool = Parse(stored, EtcdRecordsJson.Default.PoolRecord);
                if (freeWorkers < 0 || freeWorkers > pool.Workers)
                {
                    throw new ArgumentOutOfRangeException(nameof(freeWorkers), freeWorkers, $"The pool '{pool.Name}' has {pool.Workers} workers: the free count must be 0..{pool.Workers}.");
                }

                var write = new TxnRequest
                {
                    Compare = { new Compare { Key = poolKey, Target = Compare.Types.CompareTarget.Mod, Result = Compare.Types.CompareResult.Equal, ModRevision = stored.ModRevision } },
                    Success = { new RequestOp { RequestPut = new PutRequest { Key = poolKey, Value = Json(pool with { FreeWorkers = freeWorkers }, EtcdRecordsJson.Default.PoolRecord), Lease = stored.Lease } } },
                };
                if ((await _etcd.KVClient.TxnAsync(write, options).ConfigureAwait(false)).Succeeded)
                {
                    return true;
                }
            }
        }, cancellationToken);
    }

    /// <inheritdoc />
    public Task<IReadOnlyList<WorkerPoolEntry>> ListPoolsAsync(int minFree, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(minFree);
        return RunAsync("ListPools", async (options) =>
        {
            RangeResponse range = await _etcd.KVClient.RangeAsync(PrefixRequest(PoolsPart), options).ConfigureAwait(false);
            var pools = new List<WorkerPoolEntry>(range.Kvs.Count);
            foreach (KeyValue kv in range.Kvs)
            {
                PoolRecord record = Parse(kv, EtcdRecordsJson.Default.PoolRecord);
                if (record.FreeWorkers >= minFree)
                {
                    pools.Add(new WorkerPoolEntry
                    {
                        Name = record.Name,
                        Endpoint = new LinkEndpoint(record.Host, record.Port),
                        Tls = record.Tls,
                        Workers = record.Workers,
                        FreeWorkers = record.FreeWorkers,
                        Incarnation = record.Incarnation,
                    });
                }
            }

            // Most free first, so that a client fills the emptiest pools; ties in a fixed order,
            // so every replica lists the same table the same way.
            return (IReadOnlyList<WorkerPoolEntry>)[.. pools
                .OrderByDescending(static p => p.FreeWorkers)
                .ThenBy(static p => p.Name, StringComparer.Ordinal)
                .ThenBy(static p => p.Incarnation, StringComparer.Ordinal)];
        }, cancellationToken);
    }

    /// <summary>Ends every waiting Resolve with <see cref="ObjectDisposedException"/> and closes the connection; what is in etcd stays.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _disposing.Cancel();
        _client.Dispose();
        _disposing.Dispose();
    }

    /// <summary>Runs one operation under the operation timeout, turning etcd's failures into the registry's errors.</summary>
    private async Task<T> RunAsync<T>(string operation, Func<CallOptions, Task<T>> body, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        cancellationToken.ThrowIfCancellationRequested();
        DateTime deadline = DateTime.UtcNow + _operationTimeout;
        var options = new CallOptions(deadline: deadline, cancellationToken: cancellationToken);
        try
        {
            // A member that has just stopped can still be picked by the channel's balancer until
            // a connection to it fails; such a call never reached etcd, so it is safe to send
            // again, and the balancer then picks a live member. Bounded by the deadline and by
            // a few attempts per configured member.
            for (int attempt = 1; ; attempt++)
            {
                try
                {
                    return await body(options).ConfigureAwait(false);
                }
                catch (RpcException e) when (NeverReachedEtcd(e) && attempt < 3 * _endpointCount && DateTime.UtcNow < deadline && !cancellationToken.IsCancellationRequested)
                {
                }
            }
        }
        catch (Exception e) when (e is RpcException or ObjectDisposedException or OperationCanceledException && Volatile.Read(ref _disposed) != 0)
        {
            // Disposing the registry cut the call short.
            throw new ObjectDisposedException(nameof(EtcdNameRegistry));
        }
        catch (RpcException e) when (!cancellationToken.IsCancellationRequested)
        {
            throw Translate(e, operation);
        }
        catch (OperationCanceledException e) when (!cancellationToken.IsCancellationRequested)
        {
            // The etcd client reports a passed deadline as a cancellation when no member answered
            // in time (one stopped while the call connected): etcd is unavailable, not this call cancelled.
            throw Translate(new RpcException(new Status(StatusCode.DeadlineExceeded, "no etcd member answered in time"), e.Message), operation);
        }
    }

    /// <summary>Whether a call failed while connecting, before anything was sent to etcd.</summary>
    private static bool NeverReachedEtcd(RpcException e) =>
        e.StatusCode == StatusCode.Unavailable && e.InnerException is HttpRequestException { InnerException: SocketException };

    private async Task<NameEntry?> WatchForNameAsync(string name, ByteString key, long fromRevision, CancellationToken cancellationToken)
    {
        while (true)
        {
            using AsyncDuplexStreamingCall<WatchRequest, WatchResponse> call = _etcd.WatchClient.Watch(cancellationToken: cancellationToken);
            await call.RequestStream.WriteAsync(new WatchRequest { CreateRequest = new WatchCreateRequest { Key = key, StartRevision = fromRevision } }, cancellationToken).ConfigureAwait(false);
            while (await call.ResponseStream.MoveNext(cancellationToken).ConfigureAwait(false))
            {
                WatchResponse response = call.ResponseStream.Current;
                foreach (Event change in response.Events)
                {
                    if (change.Type == Event.Types.EventType.Put)
                    {
                        return ParseName(name, change.Kv).Entry;
                    }
                }

                if (response.Canceled)
                {
                    if (response.CompactRevision == 0)
                    {
                        throw new RpcException(new Status(StatusCode.Unavailable, "etcd cancelled the watch: " + response.CancelReason));
                    }

                    // The history since the read was compacted away: read again, then watch from there.
                    break;
                }
            }

            RangeResponse range = await _etcd.KVClient.RangeAsync(new RangeRequest { Key = key }, deadline: DateTime.UtcNow + _operationTimeout, cancellationToken: cancellationToken).ConfigureAwait(false);
            if (range.Kvs.Count > 0)
            {
                return ParseName(name, range.Kvs[0]).Entry;
            }

            fromRevision = range.Header.Revision + 1;
        }
    }

    private async Task<LeaseRecord> LiveLeaseAsync(string leaseId, CallOptions options)
    {
        RangeResponse range = await _etcd.KVClient.RangeAsync(new RangeRequest { Key = Key(LeasesPart, Incarnations.Of(leaseId)) }, options).ConfigureAwait(false);
        return range.Kvs.Count > 0 ? Parse(range.Kvs[0], EtcdRecordsJson.Default.LeaseRecord) : throw UnknownLease(leaseId);
    }

    private async Task CheckNameCapacityAsync(CallOptions options)
    {
        long now = _time.GetTimestamp();
        bool stale;
        lock (_countLock)
        {
            stale = _namesCountedAt == long.MinValue || _time.GetElapsedTime(_namesCountedAt, now) >= NameCountLifetime;
        }

        if (stale)
        {
            long counted = (await _etcd.KVClient.RangeAsync(CountRequest(NamesPart), options).ConfigureAwait(false)).Count;
            lock (_countLock)
            {
                _countedNames = counted;
                _namesCountedAt = now;
                Interlocked.Exchange(ref _namesAddedSinceCount, 0);
            }
        }

        long names;
        lock (_countLock)
        {
            names = _countedNames + Interlocked.Read(ref _namesAddedSinceCount);
        }

        if (names >= _maxNames)
        {
            throw new NameServerCapacityExceededException($"The NameServer holds {names} names, its limit.");
        }
    }

    private async Task RevokeQuietlyAsync(long etcdLease)
    {
        try
        {
            await _etcd.LeaseClient.LeaseRevokeAsync(new LeaseRevokeRequest { ID = etcdLease }, deadline: DateTime.UtcNow + _operationTimeout).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or ObjectDisposedException or OperationCanceledException)
        {
            // It expires by itself after its time to live.
        }
    }

    /// <summary>etcd refused the NameServer's credentials or its user's permissions: what to check.</summary>
    private EtcdRegistryUnavailableException Refused(RpcException e, string operation) =>
        new(
            $"etcd at {_endpoints} refused {operation} ({e.Status.Detail}): check the NameServer's Etcd:Username and password, its client certificate, and that the user's role may read and write keys under '{_prefix}'.",
            e);

    private Exception Translate(RpcException e, string operation)
    {
        Exception translated = e.StatusCode switch
        {
            StatusCode.NotFound when e.Status.Detail.Contains("lease not found", StringComparison.Ordinal) =>
                new LeaseNotFoundException("The lease is unknown: it expired, was closed, or etcd lost it. Open a new lease and register again.", e),
            StatusCode.Unavailable or StatusCode.DeadlineExceeded or StatusCode.Aborted =>
                new EtcdRegistryUnavailableException(
                    $"The NameServer's registry, etcd at {_endpoints}, did not complete {operation} within {_operationTimeout.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s ({e.Status.Detail}): check that the etcd members are running and reachable from the NameServer's host and that a majority of them is up (etcdctl --endpoints {_endpoints} endpoint health).",
                    e),
            StatusCode.Unauthenticated or StatusCode.PermissionDenied or StatusCode.FailedPrecondition => Refused(e, operation),

            // etcd reports a missing user name and a wrong password as invalid arguments.
            StatusCode.InvalidArgument when e.Status.Detail.Contains("user name is empty", StringComparison.Ordinal)
                || e.Status.Detail.Contains("authentication failed", StringComparison.Ordinal) => Refused(e, operation),
            StatusCode.ResourceExhausted =>
                new NameServerCapacityExceededException($"etcd at {_endpoints} is full ({e.Status.Detail}): compact and defragment it, or raise its --quota-backend-bytes.", e),
            _ => new InvalidOperationException($"etcd at {_endpoints} failed {operation} with {e.StatusCode}: {e.Status.Detail}", e),
        };
        if (translated is EtcdRegistryUnavailableException)
        {
            LogEtcdUnavailable(_logger, operation, e.StatusCode, e.Status.Detail);
        }

        return translated;
    }

    private static LeaseNotFoundException UnknownLease(string leaseId) =>
        new($"The lease of incarnation {Incarnations.Of(leaseId)} is unknown: it expired, was closed, or was never opened. Open a new lease and register again.");

    private ByteString Key(string part, string name) => ByteString.CopyFromUtf8(_prefix + part + name);

    private RangeRequest PrefixRequest(string part)
    {
        ByteString start = Key(part, "");
        return new RangeRequest { Key = start, RangeEnd = PrefixEnd(start) };
    }

    private RangeRequest CountRequest(string part)
    {
        RangeRequest request = PrefixRequest(part);
        request.CountOnly = true;
        return request;
    }

    /// <summary>The first key after every key that starts with <paramref name="prefix"/> (etcd's range end for a prefix).</summary>
    private static ByteString PrefixEnd(ByteString prefix)
    {
        byte[] end = prefix.ToByteArray();
        for (int i = end.Length - 1; i >= 0; i--)
        {
            if (end[i] < 0xff)
            {
                end[i]++;
                return ByteString.CopyFrom(end.AsSpan(0, i + 1));
            }
        }

        return ByteString.CopyFrom(0);
    }

    private static ByteString Json<T>(T value, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type) =>
        ByteString.CopyFrom(JsonSerializer.SerializeToUtf8Bytes(value, type));

    private static T Parse<T>(KeyValue kv, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type) =>
        JsonSerializer.Deserialize(kv.Value.Span, type) ?? throw new InvalidOperationException($"The etcd key '{kv.Key.ToStringUtf8()}' holds no record.");

    private static (NameEntry Entry, string Program) ParseName(string name, KeyValue kv)
    {
        NameRecord record = Parse(kv, EtcdRecordsJson.Default.NameRecord);
        var entry = new NameEntry
        {
            Name = name,
            Kind = Enum.Parse<NameKind>(record.Kind),
            ValueType = record.ValueType,
            BufferCapacity = record.BufferCapacity,
            Endpoint = new LinkEndpoint(record.Host, record.Port),
            Incarnation = record.Incarnation,
        };
        return (entry, record.Program);
    }

    private static PoolRecord ToRecord(WorkerPoolEntry pool, string program) =>
        new(pool.Name, pool.Endpoint.Host, pool.Endpoint.Port, pool.Tls, pool.Workers, pool.FreeWorkers, pool.Incarnation, program);

    [LoggerMessage(1, LogLevel.Information, "Lease {Incarnation} (etcd lease {EtcdLease}) opened for program '{Program}' at {Endpoint}")]
    private static partial void LogLeaseOpened(ILogger logger, string incarnation, string program, LinkEndpoint endpoint, long etcdLease);

    [LoggerMessage(2, LogLevel.Information, "Lease {Incarnation} of program '{Program}' closed; its names were removed with it")]
    private static partial void LogLeaseClosed(ILogger logger, string incarnation, string program);

    [LoggerMessage(4, LogLevel.Information, "Worker pool '{Pool}' registered at {Endpoint}: {Workers} workers, {Free} free")]
    private static partial void LogPoolRegistered(ILogger logger, string pool, LinkEndpoint endpoint, int workers, int free);

    [LoggerMessage(5, LogLevel.Warning, "etcd failed {Operation} with {Status}: {Detail}")]
    private static partial void LogEtcdUnavailable(ILogger logger, string operation, StatusCode status, string detail);
}
