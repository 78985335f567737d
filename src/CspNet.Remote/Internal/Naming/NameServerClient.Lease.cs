using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.NameServer;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Naming;

/// <summary>The lease keeping of the NameServer client.</summary>
/// <remarks>
/// The client holds one lease, renewed every third of its time to live by a timer loop. When a
/// renewal (or any call under the lease) answers NOT_FOUND, the NameServer restarted or the lease
/// expired: the client opens a new lease, registers every name (and the pool) it holds again and
/// raises <see cref="IncarnationChanged"/>. Methods named <c>*LockedAsync</c> run with the gate held.
/// </remarks>
internal sealed partial class NameServerClient
{
    // Names registered again at once after the lease was lost.
    private const int ReregistrationsAtOnce = 8;

    // Leases one call opens before it gives up: each further one was unknown where the next call
    // went, which only NameServers that do not share a table (or one restarting over and over) do.
    private const int LeaseOpeningsInARow = 3;

    // Guarded by _gate: the names to register again under a new lease, as the program asked for them.
    private readonly Dictionary<string, NameEntry> _registered = new(StringComparer.Ordinal);
    private bool _reregistrationPending;

    // Names found taken while re-registering, told to NameLost once the gate is released.
    private readonly List<(string Name, string Detail)> _lost = [];

    // Guarded by _gate: the worker pool registered under the lease (if any), with its latest free count.
    private WorkerPoolEntry? _pool;

    private volatile string? _leaseId;
    private TimeSpan _ttl;
    private Task _renewLoop = Task.CompletedTask;

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
                Proto.RenewReply reply = await CallAsync(o => CurrentClient.RenewAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
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
            catch (Exception e) when (!cancellationToken.IsCancellationRequested)
            {
                // Whatever a renewal met (an unreachable NameServer, a new lease refused, a lease
                // gone again between opening it and registering under it), the loop goes on: if it
                // ended, the lease would expire and this program's names with it, and programs
                // waiting for those names would wait forever.
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
            reply = await CallAsync(o => CurrentClient.OpenLeaseAsync(request, o), _options.CallTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            throw Translate(e);
        }

        _ttl = TimeToLive(reply.TtlMs);
        _leaseId = reply.LeaseId;
        LogLeaseOpened(_logger, Incarnations.Of(reply.LeaseId), NameServer, _ttl);
        if (_options.LeaseOpened is { } opened)
        {
            await opened(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Opens a new lease and registers every name (and the pool) under it again.</summary>
    /// <remarks>
    /// A call that fails over between opening the lease and registering under it reaches a replica
    /// that may not know the lease (in-memory tables are not shared): the lease is opened again
    /// there, a bounded number of times, and then <see cref="LeaseLostAgain"/> says what to do.
    /// </remarks>
    private async Task ReopenLeaseLockedAsync(CancellationToken cancellationToken)
    {
        for (int opened = 1; ; opened++)
        {
            LogLeaseLost(_logger, PublicIncarnation, NameServer, _registered.Count);
            await OpenLeaseLockedAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                await RegisterAllLockedAsync(cancellationToken).ConfigureAwait(false);
                return;
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.NotFound)
            {
                if (opened == LeaseOpeningsInARow)
                {
                    throw LeaseLostAgain(e);
                }
            }
        }
    }

    /// <summary>A lease just opened was unknown at the next call, again and again: the NameServers do not keep it.</summary>
    private LeaseNotFoundException LeaseLostAgain(RpcException e) => new(
        $"Program '{_programLabel}' found the lease it had just opened unknown at the next call, {LeaseOpeningsInARow} times in a row (last at {NameServer}): " +
        $"its calls moved between NameServers that do not share a table ({Addresses()}; in-memory NameServers are not replicas), or the NameServer restarted over and over. " +
        "Give the replicas a shared etcd (cspnet-nameserver --registry etcd; docs/DEPLOYING.md, NameServers), or give the program one NameServer. " +
        "The call did not complete; the program registers its names again at its next lease renewal.",
        e);

    private async Task RegisterAllLockedAsync(CancellationToken cancellationToken)
    {
        // Pending until every name is back: a failure part-way is finished by the next renewal.
        // Registering a name again under the same lease is harmless, so a repeat costs nothing.
        _reregistrationPending = true;

        // Several calls at once, not one after another: after a NameServer restart or a failover
        // every program does this together, and a program's recovery would otherwise take a
        // round trip per name at a NameServer busy with all of them. Bounded, so that a program
        // with many names neither opens a call per name nor fills the connection's streams.
        NameEntry[] entries = [.. _registered.Values];
        var taken = new string?[entries.Length];
        using var slots = new SemaphoreSlim(ReregistrationsAtOnce);
        var registrations = new Task[entries.Length];
        for (int i = 0; i < entries.Length; i++)
        {
            registrations[i] = RegisterAgainAsync(i);
        }

        try
        {
            await Task.WhenAll(registrations).ConfigureAwait(false);
        }
        finally
        {
            for (int i = 0; i < entries.Length; i++)
            {
                if (taken[i] is { } detail)
                {
                    // Another program took the name while this one's lease was gone; it is theirs now.
                    _registered.Remove(entries[i].Name);
                    _lost.Add((entries[i].Name, detail));
                    LogNameLost(_logger, entries[i].Name, detail);
                }
            }
        }

        if (_pool is not null)
        {
            await RegisterPoolLockedAsync(cancellationToken).ConfigureAwait(false);
        }

        _reregistrationPending = false;

        async Task RegisterAgainAsync(int i)
        {
            await slots.WaitAsync(cancellationToken).ConfigureAwait(false);
            try
            {
                await RegisterLockedAsync(entries[i], returnExisting: false, cancellationToken).ConfigureAwait(false);
            }
            catch (RpcException e) when (e.StatusCode == StatusCode.AlreadyExists)
            {
                taken[i] = e.Status.Detail;
            }
            finally
            {
                slots.Release();
            }
        }
    }

    /// <summary>The lease's time to live as the server gave it, within the range the server may configure.</summary>
    /// <remarks>A time to live of 0 would make the renewal loop spin; the server never sends one, but a client must not trust that.</remarks>
    private static TimeSpan TimeToLive(long ms) => TimeSpan.FromMilliseconds(Math.Clamp(ms, 100, 86_400_000));

    /// <summary>Leaves the gate; then, if the lease changed while it was held, says so (off the gate, so handlers may call back).</summary>
    private void ReleaseGate(string? leaseBefore)
    {
        string? leaseAfter = _leaseId;
        (string Name, string Detail)[] lost = [.. _lost];
        _lost.Clear();
        _gate.Release();
        if (leaseBefore is not null && leaseAfter is not null && leaseAfter != leaseBefore)
        {
            IncarnationChanged?.Invoke(leaseBefore, leaseAfter);
        }

        foreach ((string name, string detail) in lost)
        {
            NameLost?.Invoke(name, detail);
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
}
