using System;

namespace CspNet.NameServer;

/// <summary>Settings of a NameServer (configuration section <c>NameServer</c> in the host).</summary>
public sealed class NameServerOptions
{
    /// <summary>
    /// How long a lease lives without a renewal. Programs renew every third of it, so a dead
    /// program's names disappear after at most this long. Default 10 seconds; at least 100 ms.
    /// </summary>
    public TimeSpan LeaseTtl { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// The longest a single Resolve call waits for a name to be registered; longer requests are
    /// capped (clients simply ask again). Default 30 seconds.
    /// </summary>
    public TimeSpan MaxResolveWait { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The most leases open at once; further OpenLease calls fail with RESOURCE_EXHAUSTED. Default 10,000.</summary>
    public int MaxLeases { get; set; } = 10_000;

    /// <summary>The most names registered at once; further registrations fail with RESOURCE_EXHAUSTED. Default 1,000,000.</summary>
    public int MaxNames { get; set; } = 1_000_000;

    /// <summary>
    /// The most connections the NameServer's endpoint holds open at once (each program keeps one,
    /// plus the pools and tools that call it). A connection beyond it is closed as soon as it is
    /// accepted. Default 10,000. Applied by <see cref="NameServerHost"/> and the NameServer program;
    /// a host of your own sets Kestrel's <c>Limits.MaxConcurrentConnections</c> itself.
    /// </summary>
    public int MaxConnections { get; set; } = 10_000;

    /// <summary>
    /// A shared secret every program must present (CspNodeOptions.ClusterKey); calls without it are
    /// refused with UNAUTHENTICATED. Null (the default) accepts everyone: only for loopback or a
    /// trusted network. The key travels in clear text over h2c: put TLS in front on other networks.
    /// </summary>
    public string? ClusterKey { get; set; }

    /// <summary>Throws when a setting is out of range.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A setting is out of range.</exception>
    public void Validate()
    {
        if (LeaseTtl < TimeSpan.FromMilliseconds(100) || LeaseTtl > TimeSpan.FromDays(1))
        {
            throw new ArgumentOutOfRangeException(nameof(LeaseTtl), LeaseTtl, "LeaseTtl must be between 100 ms and one day.");
        }

        if (MaxResolveWait < TimeSpan.Zero || MaxResolveWait > TimeSpan.FromDays(1))
        {
            throw new ArgumentOutOfRangeException(nameof(MaxResolveWait), MaxResolveWait, "MaxResolveWait must be between zero and one day.");
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(MaxLeases, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxNames, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxConnections, 1);
    }
}
