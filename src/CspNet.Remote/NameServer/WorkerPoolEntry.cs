using System;

namespace CspNet.Remote.NameServer;

/// <summary>A worker pool as the NameServer knows it: where it listens and how many workers it has free.</summary>
/// <remarks>
/// The free count is a hint the pool keeps up to date; the pool itself confirms workers when a
/// client reserves them (workerpool.proto), so a stale count costs a client one refused
/// reservation, never a wrong answer.
/// </remarks>
public sealed record WorkerPoolEntry
{
    /// <summary>The pool's name, for logs and messages: 1..256 characters, no control characters.</summary>
    public required string Name { get; init; }

    /// <summary>Where the pool's WorkerPool service listens (not its program's Link endpoint).</summary>
    public required LinkEndpoint Endpoint { get; init; }

    /// <summary>Whether the endpoint speaks TLS (clients dial <c>https://</c>).</summary>
    public bool Tls { get; init; }

    /// <summary>The pool's number of workers, 1..100,000.</summary>
    public required int Workers { get; init; }

    /// <summary>The number of workers free when the pool last said so, 0..<see cref="Workers"/>.</summary>
    public int FreeWorkers { get; init; }

    /// <summary>Identifies the lease the pool is registered under (see <see cref="NameEntry.Incarnation"/>); empty before registration.</summary>
    public string Incarnation { get; init; } = "";

    /// <summary>The address clients dial: <c>http://host:port</c> or <c>https://host:port</c>.</summary>
    public Uri Uri => new UriBuilder(Tls ? Uri.UriSchemeHttps : Uri.UriSchemeHttp, Endpoint.Host, Endpoint.Port).Uri;
}
