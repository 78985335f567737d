using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Diagnostics;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.NameServer;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CspNet.NameServer;

/// <summary>A NameServer table kept in this process's memory: it is lost when the process ends.</summary>
/// <remarks>
/// <para>
/// Programs survive a NameServer restart by design: their next Renew answers NOT_FOUND and they
/// register their names again (see nameserver.proto). A replicated store (etcd, for instance)
/// can replace this class behind <see cref="INameRegistry"/> without changing the protocol.
/// </para>
/// <para>
/// Leases expire on the <see cref="TimeProvider"/> given to the constructor: one timer is set for
/// the earliest expiry, so nothing polls; every call also purges what has expired before it
/// looks at the table, so a late timer never lets a dead program's names be seen. Resolve waits
/// on a task that a registration completes, so a waiting caller holds no thread.
/// </para>
/// <para>Thread-safety: all members are safe to call from any thread (one lock guards the table).</para>
/// </remarks>
public sealed partial class InMemoryNameRegistry : INameRegistry, IDisposable
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, LeaseState> _leases = new(StringComparer.Ordinal);
    private readonly Dictionary<string, NameState> _names = new(StringComparer.Ordinal);
    private readonly Dictionary<string, List<TaskCompletionSource<NameEntry>>> _waiters = new(StringComparer.Ordinal);
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly ITimer _purgeTimer;
    private readonly TimeSpan _leaseTtl;
    private readonly long _leaseTtlTicks;
    private readonly TimeSpan _maxResolveWait;
    private readonly int _maxLeases;
    private readonly int _maxNames;

    // The timestamp the purge timer is set for; no lease expires before it (renewals only
    // postpone expiries), so a call made earlier need not look for expired leases.
    private long _nextExpiry = long.MaxValue;
    private bool _disposed;

    /// <summary>Creates an empty registry.</summary>
    /// <param name="options">Lease time to live, maximum resolve wait and limits; defaults when <see langword="null"/>.</param>
    /// <param name="timeProvider">The clock for leases and waits; <see cref="TimeProvider.System"/> when <see langword="null"/>.</param>
    /// <param name="logger">Logs leases opening, closing and expiring; nothing when <see langword="null"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public InMemoryNameRegistry(NameServerOptions? options = null, TimeProvider? timeProvider = null, ILogger<InMemoryNameRegistry>? logger = null)
    {
        options ??= new NameServerOptions();
        options.Validate();
        _leaseTtl = options.LeaseTtl;
        _maxResolveWait = options.MaxResolveWait;
        _maxLeases = options.MaxLeases;
        _maxNames = options.MaxNames;
        _time = timeProvider ?? TimeProvider.System;
        _leaseTtlTicks = (long)(_leaseTtl.TotalSeconds * _time.TimestampFrequency);
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        _purgeTimer = _time.CreateTimer(static state => ((InMemoryNameRegistry)state!).OnPurgeTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>The number of open leases.</summary>
    public int LeaseCount
    {
        get
        {
            lock (_lock)
            {
                return _leases.Count;
            }
        }
    }

    /// <summary>The number of registered names.</summary>
    public int NameCount
    {
        get
        {
            lock (_lock)
            {
                return _names.Count;
            }
        }
    }

    /// <inheritdoc />
    public Task<NameLease> OpenLeaseAsync(LinkEndpoint endpoint, string programLabel, CancellationToken cancellationToken = default)
    {
        NameValidation.Endpoint(endpoint);
        NameValidation.ProgramLabel(programLabel);
        cancellationToken.ThrowIfCancellationRequested();
        var lease = new LeaseState(Guid.NewGuid().ToString("N", CultureInfo.InvariantCulture), endpoint, programLabel);
        List<LeaseState>? expired;
        lock (_lock)
        {
            expired = BeginLocked();
            if (_leases.Count >= _maxLeases)
            {
                throw new NameServerCapacityExceededException($"The NameServer holds {_leases.Count} leases, its limit.");
            }

            lease.OpenedAt = _time.GetTimestamp();
            lease.ExpiresAt = lease.OpenedAt + _leaseTtlTicks;
            _leases.Add(lease.Id, lease);
            ScheduleLocked(lease.ExpiresAt);
        }

        LogExpired(expired);
        LogLeaseOpened(_logger, Incarnations.Of(lease.Id), lease.Program, lease.Endpoint);
        return Task.FromResult(new NameLease(lease.Id, _leaseTtl));
    }

    /// <inheritdoc />
    public Task<TimeSpan> RenewAsync(string leaseId, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        cancellationToken.ThrowIfCancellationRequested();
        List<LeaseState>? expired;
        lock (_lock)
        {
            expired = BeginLocked();
            LiveLeaseLocked(leaseId).ExpiresAt = _time.GetTimestamp() + _leaseTtlTicks;
        }

        LogExpired(expired);
        return Task.FromResult(_leaseTtl);
    }

    /// <inheritdoc />
    public Task CloseLeaseAsync(string leaseId, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        cancellationToken.ThrowIfCancellationRequested();
        List<LeaseState>? expired;
        LeaseState lease;
        lock (_lock)
        {
            expired = BeginLocked();
            lease = LiveLeaseLocked(leaseId);
            RemoveLeaseLocked(lease);
        }

        LogExpired(expired);
        LogLeaseClosed(_logger, Incarnations.Of(lease.Id), lease.Program, lease.Names.Count);
        return Task.CompletedTask;
    }

    /// <inheritdoc />
    public Task<NameRegistration> RegisterAsync(string leaseId, NameEntry entry, bool returnExisting, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        NameValidation.Entry(entry);
        cancellationToken.ThrowIfCancellationRequested();
        List<LeaseState>? expired;
        List<TaskCompletionSource<NameEntry>>? waiters;
        NameEntry registered;
        lock (_lock)
        {
            expired = BeginLocked();
            LeaseState lease = LiveLeaseLocked(leaseId);
            if (_names.TryGetValue(entry.Name, out NameState? existing))
            {
                bool sameRegistration = ReferenceEquals(existing.Lease, lease) && existing.Entry.HasSameDefinition(entry);
                if (!sameRegistration && !returnExisting)
                {
                    throw new NameAlreadyRegisteredException(existing.Entry, existing.Lease.Program);
                }

                return Task.FromResult(new NameRegistration(existing.Entry, Created: false));
            }

            if (_names.Count >= _maxNames)
            {
                throw new NameServerCapacityExceededException($"The NameServer holds {_names.Count} names, its limit.");
            }

            registered = entry with { Endpoint = lease.Endpoint, Incarnation = Incarnations.Of(lease.Id) };
            _names.Add(registered.Name, new NameState(registered, lease));
            lease.Names.Add(registered.Name);
            _waiters.Remove(registered.Name, out waiters);
        }

        LogExpired(expired);
        if (waiters is not null)
        {
            foreach (TaskCompletionSource<NameEntry> waiter in waiters)
            {
                waiter.TrySetResult(registered);
            }
        }

        RemoteMetrics.CountRegistration(registered.Kind.ToString());
        return Task.FromResult(new NameRegistration(registered, Created: true));
    }

    /// <inheritdoc />
    public Task<bool> UnregisterAsync(string leaseId, string name, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        NameValidation.Name(name);
        cancellationToken.ThrowIfCancellationRequested();
        List<LeaseState>? expired;
        bool removed = false;
        lock (_lock)
        {
            expired = BeginLocked();
            LeaseState lease = LiveLeaseLocked(leaseId);
            if (_names.TryGetValue(name, out NameState? existing) && ReferenceEquals(existing.Lease, lease))
            {
                _names.Remove(name);
                lease.Names.Remove(name);
                removed = true;
            }
        }

        LogExpired(expired);
        return Task.FromResult(removed);
    }

    /// <inheritdoc />
    public Task<NameEntry> MoveAsync(string leaseId, string name, string toIncarnation, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        NameValidation.Name(name);
        NameValidation.Incarnation(toIncarnation, nameof(toIncarnation));
        cancellationToken.ThrowIfCancellationRequested();
        List<LeaseState>? expired;
        NameEntry moved;
        lock (_lock)
        {
            expired = BeginLocked();
            LeaseState lease = LiveLeaseLocked(leaseId);
            if (!_names.TryGetValue(name, out NameState? existing) || !ReferenceEquals(existing.Lease, lease))
            {
                throw new NameMoveRefusedException($"The name '{name}' is not registered under the lease of incarnation {Incarnations.Of(leaseId)}: only the program that holds a name moves it.");
            }

            // Moves are rare: a scan of the leases (at most MaxLeases) costs less than an index kept on every lease.
            LeaseState? target = null;
            foreach (LeaseState candidate in _leases.Values)
            {
                if (Incarnations.Of(candidate.Id) == toIncarnation)
                {
                    target = candidate;
                    break;
                }
            }

            if (target is null)
            {
                throw new NameMoveRefusedException($"The name '{name}' cannot move to incarnation {toIncarnation}: no live program has it (it left, or its lease expired).");
            }

            moved = existing.Entry with { Endpoint = target.Endpoint, Incarnation = toIncarnation };
            _names[name] = new NameState(moved, target);
            lease.Names.Remove(name);
            target.Names.Add(name);
        }

        LogExpired(expired);
        return Task.FromResult(moved);
    }

    /// <inheritdoc />
    public async Task<NameEntry?> ResolveAsync(string name, TimeSpan maxWait, CancellationToken cancellationToken = default)
    {
        NameValidation.Name(name);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxWait, TimeSpan.Zero);
        cancellationToken.ThrowIfCancellationRequested();
        if (maxWait > _maxResolveWait)
        {
            maxWait = _maxResolveWait;
        }

        List<LeaseState>? expired;
        NameEntry? found = null;
        TaskCompletionSource<NameEntry>? waiter = null;
        lock (_lock)
        {
            expired = BeginLocked();
            if (_names.TryGetValue(name, out NameState? state))
            {
                found = state.Entry;
            }
            else if (maxWait > TimeSpan.Zero)
            {
                // Continuations run asynchronously so that a registration never runs a resolver's code under its own call.
                waiter = new TaskCompletionSource<NameEntry>(TaskCreationOptions.RunContinuationsAsynchronously);
                if (!_waiters.TryGetValue(name, out List<TaskCompletionSource<NameEntry>>? list))
                {
                    list = [];
                    _waiters.Add(name, list);
                }

                list.Add(waiter);
            }
        }

        LogExpired(expired);
        if (waiter is null)
        {
            return found;
        }

        try
        {
            return await waiter.Task.WaitAsync(maxWait, _time, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            RemoveWaiter(name, waiter);

            // A registration may have completed the waiter just as the wait ended.
            return waiter.Task.IsCompletedSuccessfully ? await waiter.Task.ConfigureAwait(false) : null;
        }
        catch (OperationCanceledException)
        {
            RemoveWaiter(name, waiter);
            throw;
        }
    }

    /// <inheritdoc />
    public Task<WorkerPoolEntry> RegisterPoolAsync(string leaseId, WorkerPoolEntry pool, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        NameValidation.Pool(pool);
        cancellationToken.ThrowIfCancellationRequested();
        List<LeaseState>? expired;
        WorkerPoolEntry registered;
        lock (_lock)
        {
            expired = BeginLocked();
            LeaseState lease = LiveLeaseLocked(leaseId);
            registered = pool with { Incarnation = Incarnations.Of(lease.Id) };
            lease.Pool = registered;
        }

        LogExpired(expired);
        LogPoolRegistered(_logger, registered.Name, registered.Endpoint, registered.Workers, registered.FreeWorkers);
        return Task.FromResult(registered);
    }

    /// <inheritdoc />
    public Task UpdatePoolAsync(string leaseId, int freeWorkers, CancellationToken cancellationToken = default)
    {
        NameValidation.LeaseId(leaseId);
        cancellationToken.ThrowIfCancellationRequested();
        List<LeaseState>? expired;
        lock (_lock)
        {
            expired = BeginLocked();
            LeaseState lease = LiveLeaseLocked(leaseId);
            WorkerPoolEntry pool = lease.Pool ?? throw new LeaseNotFoundException(
                $"No worker pool is registered under the lease of incarnation {Incarnations.Of(leaseId)}: register it again.");
            if (freeWorkers < 0 || freeWorkers > pool.Workers)
            {
                throw new ArgumentOutOfRangeException(nameof(freeWorkers), freeWorkers, $"The pool '{pool.Name}' has {pool.Workers} workers: the free count must be 0..{pool.Workers}.");
            }

            lease.Pool = pool with { FreeWorkers = freeWorkers };
        }

        LogExpired(expired);
        return Task.CompletedTask;
    }

    /// <inheritdoc />
    public Task<IReadOnlyList<WorkerPoolEntry>> ListPoolsAsync(int minFree, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(minFree);
        cancellationToken.ThrowIfCancellationRequested();
        List<LeaseState>? expired;
        var pools = new List<WorkerPoolEntry>();
        lock (_lock)
        {
            expired = BeginLocked();
            foreach (LeaseState lease in _leases.Values)
            {
                if (lease.Pool is { } pool && pool.FreeWorkers >= minFree)
                {
                    pools.Add(pool);
                }
            }
        }

        LogExpired(expired);

        // Most free first, so that a client fills the emptiest pools (the paper's load balancing).
        pools.Sort(static (a, b) => b.FreeWorkers.CompareTo(a.FreeWorkers));
        return Task.FromResult<IReadOnlyList<WorkerPoolEntry>>(pools);
    }

    /// <summary>Stops the purge timer and fails every waiting Resolve with <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose()
    {
        List<TaskCompletionSource<NameEntry>> waiters = [];
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            foreach (List<TaskCompletionSource<NameEntry>> list in _waiters.Values)
            {
                waiters.AddRange(list);
            }

            _waiters.Clear();
        }

        _purgeTimer.Dispose();
        foreach (TaskCompletionSource<NameEntry> waiter in waiters)
        {
            waiter.TrySetException(new ObjectDisposedException(nameof(InMemoryNameRegistry)));
        }
    }

    /// <summary>Every call starts here: refuses work after disposal and purges expired leases first.</summary>
    private List<LeaseState>? BeginLocked()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "BeginLocked is called under the registry's lock.");
        ObjectDisposedException.ThrowIf(_disposed, this);
        long now = _time.GetTimestamp();
        return now >= _nextExpiry ? PurgeExpiredLocked(now) : null;
    }

    private LeaseState LiveLeaseLocked(string leaseId)
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "LiveLeaseLocked is called under the registry's lock.");
        return _leases.TryGetValue(leaseId, out LeaseState? lease)
            ? lease
            : throw new LeaseNotFoundException($"The lease of incarnation {Incarnations.Of(leaseId)} is unknown: it expired, was closed, or the NameServer restarted. Open a new lease and register again.");
    }

    private List<LeaseState>? PurgeExpiredLocked(long now)
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "PurgeExpiredLocked is called under the registry's lock.");
        List<LeaseState>? expired = null;
        long next = long.MaxValue;
        foreach (LeaseState lease in _leases.Values)
        {
            if (lease.ExpiresAt <= now)
            {
                (expired ??= []).Add(lease);
            }
            else if (lease.ExpiresAt < next)
            {
                next = lease.ExpiresAt;
            }
        }

        if (expired is not null)
        {
            foreach (LeaseState lease in expired)
            {
                RemoveLeaseLocked(lease);
            }
        }

        _nextExpiry = long.MaxValue;
        ScheduleLocked(next);
        return expired;
    }

    private void RemoveLeaseLocked(LeaseState lease)
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "RemoveLeaseLocked is called under the registry's lock.");
        _leases.Remove(lease.Id);
        foreach (string name in lease.Names)
        {
            _names.Remove(name);
        }
    }

    private void ScheduleLocked(long expiresAt)
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "ScheduleLocked is called under the registry's lock.");
        if (expiresAt >= _nextExpiry || _disposed)
        {
            return;
        }

        _nextExpiry = expiresAt;
        TimeSpan due = _time.GetElapsedTime(_time.GetTimestamp(), expiresAt);
        _purgeTimer.Change(due < TimeSpan.Zero ? TimeSpan.Zero : due, Timeout.InfiniteTimeSpan);
    }

    private void OnPurgeTimer()
    {
        List<LeaseState>? expired;
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }

            expired = PurgeExpiredLocked(_time.GetTimestamp());
        }

        LogExpired(expired);
    }

    private void RemoveWaiter(string name, TaskCompletionSource<NameEntry> waiter)
    {
        lock (_lock)
        {
            if (_waiters.TryGetValue(name, out List<TaskCompletionSource<NameEntry>>? list) && list.Remove(waiter) && list.Count == 0)
            {
                _waiters.Remove(name);
            }
        }
    }

    private void LogExpired(List<LeaseState>? expired)
    {
        if (expired is null)
        {
            return;
        }

        RemoteMetrics.CountLeaseExpiries(expired.Count);
        foreach (LeaseState lease in expired)
        {
            LogLeaseExpired(_logger, Incarnations.Of(lease.Id), lease.Program, lease.Endpoint, lease.Names.Count);
            RecordExpired(lease);
        }
    }

    [LoggerMessage(1, LogLevel.Information, "Lease of incarnation {Incarnation} opened for program '{Program}' at {Endpoint}")]
    private static partial void LogLeaseOpened(ILogger logger, string incarnation, string program, LinkEndpoint endpoint);

    [LoggerMessage(2, LogLevel.Information, "Lease of incarnation {Incarnation} of program '{Program}' closed; {NameCount} names removed")]
    private static partial void LogLeaseClosed(ILogger logger, string incarnation, string program, int nameCount);

    [LoggerMessage(3, LogLevel.Warning, "Lease of incarnation {Incarnation} of program '{Program}' at {Endpoint} expired; {NameCount} names purged")]
    private static partial void LogLeaseExpired(ILogger logger, string incarnation, string program, LinkEndpoint endpoint, int nameCount);

    [LoggerMessage(4, LogLevel.Information, "Worker pool '{Pool}' registered at {Endpoint}: {Workers} workers, {Free} free")]
    private static partial void LogPoolRegistered(ILogger logger, string pool, LinkEndpoint endpoint, int workers, int free);

    /// <summary>A program's lease: mutable, guarded by the registry's lock.</summary>
    private sealed class LeaseState(string id, LinkEndpoint endpoint, string program)
    {
        public string Id { get; } = id;

        public LinkEndpoint Endpoint { get; } = endpoint;

        public string Program { get; } = program;

        public long OpenedAt { get; set; }

        public long ExpiresAt { get; set; }

        public HashSet<string> Names { get; } = new(StringComparer.Ordinal);

        public WorkerPoolEntry? Pool { get; set; }
    }

    private sealed record NameState(NameEntry Entry, LeaseState Lease);
}
