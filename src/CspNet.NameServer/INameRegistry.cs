using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.NameServer;

namespace CspNet.NameServer;

/// <summary>
/// The NameServer's table: which program hosts each name, under leases that programs keep alive.
/// </summary>
/// <remarks>
/// <para>
/// The gRPC service is a thin mapping onto this interface, so the storage can change without
/// touching the protocol: <see cref="InMemoryNameRegistry"/> keeps one process's table; the
/// etcd registry (package CspNet.NameServer.Etcd: leases are etcd leases, names keys attached
/// to them, Resolve a watch on the key) lets several NameServer replicas share it.
/// For that reason every member is asynchronous and takes a cancellation token.
/// </para>
/// <para>
/// Errors: <see cref="ArgumentException"/> for malformed arguments,
/// <see cref="LeaseNotFoundException"/> for unknown or expired leases,
/// <see cref="NameAlreadyRegisteredException"/> for taken names and
/// <see cref="NameServerCapacityExceededException"/> when the registry is full, and an
/// <see cref="System.IO.IOException"/> when the store behind it (etcd) cannot be reached, which
/// the NameServer answers with UNAVAILABLE and the exception's message.
/// </para>
/// </remarks>
public interface INameRegistry
{
    /// <summary>Joins a program: opens a lease under which it registers names.</summary>
    /// <param name="endpoint">Where the program's Link service listens.</param>
    /// <param name="programLabel">A human-readable label for logs and messages (0..256 characters, no control characters).</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The new lease.</returns>
    Task<NameLease> OpenLeaseAsync(LinkEndpoint endpoint, string programLabel, CancellationToken cancellationToken = default);

    /// <summary>Keeps a lease alive for another time to live.</summary>
    /// <param name="leaseId">The lease.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The time to live from now.</returns>
    Task<TimeSpan> RenewAsync(string leaseId, CancellationToken cancellationToken = default);

    /// <summary>Leaves: closes a lease and removes its names at once.</summary>
    /// <param name="leaseId">The lease.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the lease is closed.</returns>
    Task CloseLeaseAsync(string leaseId, CancellationToken cancellationToken = default);

    /// <summary>Registers a name under a lease; the endpoint and incarnation come from the lease.</summary>
    /// <param name="leaseId">The lease.</param>
    /// <param name="entry">What the name stands for; its endpoint and incarnation are ignored.</param>
    /// <param name="returnExisting">
    /// When the name is taken, return the existing entry with <c>Created = false</c> instead of
    /// throwing <see cref="NameAlreadyRegisteredException"/>.
    /// </param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The registered (or existing) entry and whether this call created it.</returns>
    /// <remarks>Registering the same definition again under the same lease is not a conflict: it returns the entry with <c>Created = false</c>, so a retried call is harmless.</remarks>
    Task<NameRegistration> RegisterAsync(string leaseId, NameEntry entry, bool returnExisting, CancellationToken cancellationToken = default);

    /// <summary>Removes a name registered under a lease.</summary>
    /// <param name="leaseId">The lease.</param>
    /// <param name="name">The name.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns><see langword="false"/> when the name is not registered under this lease.</returns>
    Task<bool> UnregisterAsync(string leaseId, string name, CancellationToken cancellationToken = default);

    /// <summary>
    /// Moves a name registered under <paramref name="leaseId"/> to the live program whose
    /// incarnation is <paramref name="toIncarnation"/>, in one step: the entry keeps its
    /// definition, takes that program's endpoint and incarnation, and belongs to its lease from
    /// then on. A resolve never finds the name missing in between.
    /// </summary>
    /// <param name="leaseId">The lease the name is registered under now.</param>
    /// <param name="name">The name.</param>
    /// <param name="toIncarnation">The incarnation (<see cref="NameEntry.Incarnation"/>) of the program that takes the name.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The entry as it is registered now.</returns>
    /// <exception cref="NameMoveRefusedException">The name is not registered under <paramref name="leaseId"/>, or no live lease has <paramref name="toIncarnation"/>.</exception>
    Task<NameEntry> MoveAsync(string leaseId, string name, string toIncarnation, CancellationToken cancellationToken = default);

    /// <summary>Looks a name up, waiting up to <paramref name="maxWait"/> for it to be registered, holding no thread meanwhile.</summary>
    /// <param name="name">The name.</param>
    /// <param name="maxWait">How long to wait; <see cref="TimeSpan.Zero"/> answers at once. Capped by the registry's maximum wait.</param>
    /// <param name="cancellationToken">Ends the wait with <see cref="OperationCanceledException"/>.</param>
    /// <returns>The entry, or <see langword="null"/> when the name was not registered in time.</returns>
    Task<NameEntry?> ResolveAsync(string name, TimeSpan maxWait, CancellationToken cancellationToken = default);

    /// <summary>Registers the worker pool of a lease, replacing the one registered before under it; it is purged with the lease.</summary>
    /// <param name="leaseId">The lease.</param>
    /// <param name="pool">The pool; its incarnation is ignored (taken from the lease).</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The registered pool.</returns>
    Task<WorkerPoolEntry> RegisterPoolAsync(string leaseId, WorkerPoolEntry pool, CancellationToken cancellationToken = default);

    /// <summary>Updates the free-worker count of the lease's pool.</summary>
    /// <param name="leaseId">The lease.</param>
    /// <param name="freeWorkers">The number of free workers, 0..the pool's workers.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the count is updated.</returns>
    /// <exception cref="LeaseNotFoundException">The lease is unknown or has no pool.</exception>
    Task UpdatePoolAsync(string leaseId, int freeWorkers, CancellationToken cancellationToken = default);

    /// <summary>Lists the pools with at least <paramref name="minFree"/> free workers, most free first.</summary>
    /// <param name="minFree">The fewest free workers a listed pool has; 0 lists every pool.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The pools.</returns>
    Task<IReadOnlyList<WorkerPoolEntry>> ListPoolsAsync(int minFree, CancellationToken cancellationToken = default);
}
