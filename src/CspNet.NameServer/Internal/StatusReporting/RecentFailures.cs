using System;
using System.Collections.Generic;
using System.Threading;

namespace CspNet.NameServer.Internal.StatusReporting;

/// <summary>What went wrong, as the status page shows it.</summary>
internal enum FailureKind
{
    /// <summary>A program stopped renewing its lease; its names were purged.</summary>
    LeaseExpired,

    /// <summary>A worker pool's lease expired: the pool is gone.</summary>
    PoolLost,

    /// <summary>A request was refused: malformed, unknown lease, name taken.</summary>
    Refused,

    /// <summary>A request came without the cluster key.</summary>
    Unauthenticated,

    /// <summary>A request was refused because the registry is full.</summary>
    Full,

    /// <summary>The registry's store (etcd) did not answer: the request was answered UNAVAILABLE.</summary>
    RegistryUnavailable,
}

/// <summary>One failure the NameServer saw.</summary>
/// <param name="Time">When, by the NameServer's clock.</param>
/// <param name="Kind">What kind of failure.</param>
/// <param name="Reason">What happened, in a sentence (client input in it is shortened and free of control characters).</param>
internal sealed record FailureRecord(DateTimeOffset Time, FailureKind Kind, string Reason);

/// <summary>
/// The last <see cref="Capacity"/> failures the NameServer saw, for the status page: a fixed ring,
/// so a client that keeps sending bad requests evicts older entries but cannot grow memory.
/// </summary>
internal sealed class RecentFailures(TimeProvider time)
{
    internal const int Capacity = 50;

    // Reasons quote client input; the cap keeps a page of them readable and the ring small.
    internal const int MaxReasonLength = 300;

    private readonly Lock _lock = new();
    private readonly FailureRecord?[] _ring = new FailureRecord?[Capacity];
    private int _next;
    private long _total;

    /// <summary>How many failures were recorded since the NameServer started, including those no longer kept.</summary>
    internal long Total
    {
        get
        {
            lock (_lock)
            {
                return _total;
            }
        }
    }

    internal void Record(FailureKind kind, string reason)
    {
        if (reason.Length > MaxReasonLength)
        {
            reason = string.Concat(reason.AsSpan(0, MaxReasonLength - 1), "…");
        }

        var record = new FailureRecord(time.GetUtcNow(), kind, reason);
        lock (_lock)
        {
            _ring[_next] = record;
            _next = (_next + 1) % Capacity;
            _total++;
        }
    }

    /// <summary>The failures kept, newest first.</summary>
    internal IReadOnlyList<FailureRecord> Snapshot()
    {
        var list = new List<FailureRecord>(Capacity);
        lock (_lock)
        {
            for (int i = 1; i <= Capacity; i++)
            {
                if (_ring[(_next - i + Capacity) % Capacity] is { } record)
                {
                    list.Add(record);
                }
            }
        }

        return list;
    }
}
