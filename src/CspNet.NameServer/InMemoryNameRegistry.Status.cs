using System;
using System.Collections.Generic;
using CspNet.NameServer.Internal.StatusReporting;

namespace CspNet.NameServer;

// The status page's view of the registry: a bounded copy taken under the lock, and the
// expiries it reports to the page's ring of recent failures.
public sealed partial class InMemoryNameRegistry
{
    /// <summary>Where lease expiries are reported for the status page; set by <c>AddCspNameServer</c>.</summary>
    internal RecentFailures? Failures { get; init; }

    /// <summary>Copies at most <paramref name="maxRows"/> names and pools; the lock is held only for the copy.</summary>
    internal RegistrySnapshot Snapshot(int maxRows)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxRows);
        List<LeaseState>? expired;
        List<StatusName> names;
        var pools = new List<StatusPool>();
        int leaseCount, nameCount, poolCount = 0;
        lock (_lock)
        {
            expired = BeginLocked();
            long now = _time.GetTimestamp();
            leaseCount = _leases.Count;
            nameCount = _names.Count;
            names = new List<StatusName>(Math.Min(nameCount, maxRows));

            // A huge table is shown in part: which part is the dictionary's order, but copying
            // and sorting a million names would hold every caller up for the sake of one page.
            foreach (NameState state in _names.Values)
            {
                if (names.Count == maxRows)
                {
                    break;
                }

                names.Add(new StatusName(state.Entry, state.Lease.Program, _time.GetElapsedTime(state.Lease.OpenedAt, now), ExpiresIn(state.Lease, now)));
            }

            foreach (LeaseState lease in _leases.Values)
            {
                if (lease.Pool is { } pool && poolCount++ < maxRows)
                {
                    pools.Add(new StatusPool(pool, lease.Program, _time.GetElapsedTime(lease.OpenedAt, now), ExpiresIn(lease, now)));
                }
            }
        }

        LogExpired(expired);
        names.Sort(static (a, b) => string.CompareOrdinal(a.Entry.Name, b.Entry.Name));
        pools.Sort(static (a, b) => string.CompareOrdinal(a.Pool.Name, b.Pool.Name));
        return new RegistrySnapshot(_leaseTtl, leaseCount, nameCount, poolCount, names, pools);
    }

    private TimeSpan ExpiresIn(LeaseState lease, long now)
    {
        TimeSpan left = _time.GetElapsedTime(now, lease.ExpiresAt);
        return left < TimeSpan.Zero ? TimeSpan.Zero : left;
    }

    private void RecordExpired(LeaseState lease)
    {
        if (Failures is null)
        {
            return;
        }

        string names = lease.Names.Count switch
        {
            0 => "no names",
            1 => "1 name",
            _ => lease.Names.Count + " names",
        };
        if (lease.Pool is { } pool)
        {
            Failures.Record(FailureKind.PoolLost, $"Worker pool '{pool.Name}' at {pool.Endpoint} (program '{lease.Program}') stopped renewing its lease; {names} purged with it.");
        }
        else
        {
            Failures.Record(FailureKind.LeaseExpired, $"Program '{lease.Program}' at {lease.Endpoint} stopped renewing its lease; {names} purged.");
        }
    }
}
