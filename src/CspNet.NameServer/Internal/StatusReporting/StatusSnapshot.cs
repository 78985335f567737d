using System;
using System.Collections.Generic;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.NameServer;

namespace CspNet.NameServer.Internal.StatusReporting;

/// <summary>A registered name with its program's lease, as the status page shows it.</summary>
/// <param name="Entry">The name's entry.</param>
/// <param name="Program">The hosting program's label.</param>
/// <param name="LeaseAge">How long ago the program opened its lease.</param>
/// <param name="ExpiresIn">How long the lease lives without another renewal.</param>
internal sealed record StatusName(NameEntry Entry, string Program, TimeSpan LeaseAge, TimeSpan ExpiresIn);

/// <summary>A registered worker pool with its program's lease.</summary>
/// <param name="Pool">The pool's entry (workers and free workers as last reported).</param>
/// <param name="Program">The pool program's label.</param>
/// <param name="LeaseAge">How long ago the pool opened its lease.</param>
/// <param name="ExpiresIn">How long the lease lives without another renewal.</param>
internal sealed record StatusPool(WorkerPoolEntry Pool, string Program, TimeSpan LeaseAge, TimeSpan ExpiresIn);

/// <summary>The registry's table at one moment, copied out under its lock so that rendering holds no lock.</summary>
/// <param name="LeaseTtl">The registry's lease time to live.</param>
/// <param name="LeaseCount">Open leases.</param>
/// <param name="NameCount">Registered names, including those not in <paramref name="Names"/>.</param>
/// <param name="PoolCount">Registered pools, including those not in <paramref name="Pools"/>.</param>
/// <param name="Names">At most the snapshot's row limit of names, by name.</param>
/// <param name="Pools">At most the row limit of pools, by name.</param>
internal sealed record RegistrySnapshot(
    TimeSpan LeaseTtl, int LeaseCount, int NameCount, int PoolCount, IReadOnlyList<StatusName> Names, IReadOnlyList<StatusPool> Pools);

/// <summary>Everything the status page shows.</summary>
/// <param name="TakenAt">When the snapshot was taken, by the NameServer's clock.</param>
/// <param name="Registry">The table; <see langword="null"/> when the registry cannot list it (not an <see cref="InMemoryNameRegistry"/>).</param>
/// <param name="Failures">Recent failures, newest first.</param>
/// <param name="FailureTotal">Failures since start, including those no longer kept.</param>
/// <param name="Refresh">How often the page reloads itself.</param>
internal sealed record StatusSnapshot(
    DateTimeOffset TakenAt, RegistrySnapshot? Registry, IReadOnlyList<FailureRecord> Failures, long FailureTotal, TimeSpan Refresh);
