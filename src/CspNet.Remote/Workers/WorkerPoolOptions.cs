using System;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Workers;

/// <summary>
/// Settings of a worker pool (<see cref="WorkerPoolHost"/>, or the WorkerPoolService program's
/// configuration section <c>WorkerPool</c>).
/// </summary>
/// <remarks>
/// A worker pool runs code that clients send it: that is remote code execution by design (see
/// docs/SECURITY.md). It therefore listens on 127.0.0.1 unless told otherwise, and refuses to
/// listen anywhere else without <see cref="Token"/> or a client certificate requirement.
/// </remarks>
public sealed class WorkerPoolOptions
{
    /// <summary>The IP address the pool (and its program's Link endpoint) binds to. Default <c>127.0.0.1</c>.</summary>
    public string Address { get; set; } = "127.0.0.1";

    /// <summary>The TCP port of the pool's WorkerPool service; 0 (the default) picks a free port.</summary>
    public int Port { get; set; }

    /// <summary>The host name or address clients dial, if not <see cref="Address"/> (required when binding to <c>0.0.0.0</c> or <c>::</c>).</summary>
    public string? AdvertisedHost { get; set; }

    /// <summary>The NameServer the pool registers with. Default <c>http://127.0.0.1:9090</c>.</summary>
    public Uri NameServer { get; set; } = new("http://127.0.0.1:9090");

    /// <summary>The number of workers: processes this pool runs at once, each on its own thread. Default <see cref="Environment.ProcessorCount"/>.</summary>
    public int Workers { get; set; } = Environment.ProcessorCount;

    /// <summary>The pool's name in the NameServer and in logs. Default: machine name and process id.</summary>
    public string? Name { get; set; }

    /// <summary>
    /// A shared secret clients present (<c>CspNodeOptions.WorkerPoolToken</c>); calls without it or
    /// with another are refused with UNAUTHENTICATED. Send it only over TLS (<see cref="Certificate"/>)
    /// on a network you do not trust: over plain HTTP/2 anyone on the path can read it.
    /// </summary>
    public string? Token { get; set; }

    /// <summary>The certificate (with private key) the pool serves TLS with; null (the default) serves plain HTTP/2.</summary>
    public X509Certificate2? Certificate { get; set; }

    /// <summary>
    /// For mutual TLS: the certificate authority client certificates must chain to. When set, the
    /// pool requires a client certificate (and <see cref="Certificate"/> must be set).
    /// </summary>
    public X509Certificate2? ClientCertificateAuthority { get; set; }

    /// <summary>
    /// The cluster's certificate authority, for the pool's own program (<c>CspNodeOptions.TrustedCertificate</c>):
    /// it dials the NameServer and other programs over TLS and checks their certificates. Bound to
    /// another address than loopback, the pool's program serves its links with <see cref="Certificate"/>.
    /// </summary>
    public X509Certificate2? TrustedCertificate { get; set; }

    /// <summary>The cluster key of the system (<c>CspNodeOptions.ClusterKey</c>): the pool's own program joins the NameServer and the named channels with it.</summary>
    public string? ClusterKey { get; set; }

    /// <summary>How long shipped code stays loaded without use before it is unloaded. Default 5 minutes.</summary>
    public TimeSpan IdleUnload { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>The largest assembly image the pool accepts. Default 64 MiB.</summary>
    public int MaxAssemblySize { get; set; } = 64 << 20;

    /// <summary>
    /// The most bytes of shipped assembly images the pool keeps. Past it the least recently used
    /// images are dropped (a job needing one again has it sent again); an image that would not fit
    /// beside the images waiting jobs need ends its stream with RESOURCE_EXHAUSTED. At least
    /// <see cref="MaxAssemblySize"/>. Default 256 MiB.
    /// </summary>
    public long MaxImageStoreBytes { get; set; } = DefaultMaxImageStoreBytes;

    /// <summary>
    /// How long workers granted to a client may stay without a job (or a Release). When it passes,
    /// the client's stream gives back the unused workers, refuses its jobs still waiting for images,
    /// lets its running jobs finish and report, and ends with RESOURCE_EXHAUSTED. Default 30 seconds.
    /// </summary>
    public TimeSpan ReservationTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// How long a job may wait for the assembly images it needs; when it passes the stream ends as
    /// for <see cref="ReservationTimeout"/>. Default 2 minutes.
    /// </summary>
    public TimeSpan ImageTimeout { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>How long a silent client or peer may stay unnoticed (keep-alive), as <c>CspNodeOptions.PeerTimeout</c>. Default 5 seconds.</summary>
    public TimeSpan PeerTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Where the pool logs: reservations, jobs, refusals. Default: nowhere (the service program logs to its host's loggers).</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>The default of <see cref="MaxImageStoreBytes"/>: 256 MiB.</summary>
    internal const long DefaultMaxImageStoreBytes = 256L << 20;

    internal string EffectiveName => string.IsNullOrEmpty(Name) ? $"{Environment.MachineName}[{Environment.ProcessId}]" : Name;

    /// <summary>Throws when a setting is out of range or the pool would be exposed without authentication.</summary>
    /// <exception cref="ArgumentException">A setting is wrong; the message says which and what to do.</exception>
    public void Validate()
    {
        if (!IPAddress.TryParse(Address, out IPAddress? ip))
        {
            throw new ArgumentException($"WorkerPoolOptions.Address must be an IP address to bind to (got '{Address}'). Use 127.0.0.1 for this machine only.", nameof(Address));
        }

        if (Port is < 0 or > 65535)
        {
            throw new ArgumentOutOfRangeException(nameof(Port), Port, "WorkerPoolOptions.Port must be 0 (any free port) or 1..65535.");
        }

        if (Workers is < 1 or > 100_000)
        {
            throw new ArgumentOutOfRangeException(nameof(Workers), Workers, "WorkerPoolOptions.Workers must be between 1 and 100,000.");
        }

        ArgumentNullException.ThrowIfNull(NameServer);
        if (!IPAddress.IsLoopback(ip) && string.IsNullOrEmpty(Token) && ClientCertificateAuthority is null)
        {
            throw new ArgumentException(
                $"Binding the worker pool to {Address} lets anyone who reaches it run code here: set WorkerPoolOptions.Token " +
                "(environment CSPNET_WorkerPool__Token), preferably with a TLS certificate, or require client certificates " +
                "(mutual TLS), or bind to 127.0.0.1. See docs/SECURITY.md.",
                nameof(Token));
        }

        if (!IPAddress.IsLoopback(ip) && Certificate is null)
        {
            throw new ArgumentException(
                $"Binding the worker pool to {Address} would let its token, the processes' state and their code travel in clear text (and clients refuse that): " +
                "set WorkerPoolOptions.Certificate (TLS), or bind to 127.0.0.1. See docs/SECURITY.md.",
                nameof(Certificate));
        }

        if (ClientCertificateAuthority is not null && Certificate is null)
        {
            throw new ArgumentException("WorkerPoolOptions.ClientCertificateAuthority (mutual TLS) needs WorkerPoolOptions.Certificate: client certificates are only asked for over TLS.", nameof(Certificate));
        }

        if ((ip.Equals(IPAddress.Any) || ip.Equals(IPAddress.IPv6Any)) && string.IsNullOrEmpty(AdvertisedHost))
        {
            throw new ArgumentException($"Binding to {Address} listens on every interface: set WorkerPoolOptions.AdvertisedHost to the address clients should dial.", nameof(AdvertisedHost));
        }

        if (IdleUnload <= TimeSpan.Zero || PeerTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(IdleUnload), "WorkerPoolOptions.IdleUnload and PeerTimeout must be positive.");
        }

        if (MaxAssemblySize < 1024)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxAssemblySize), MaxAssemblySize, "WorkerPoolOptions.MaxAssemblySize must be at least 1 KiB.");
        }

        if (MaxImageStoreBytes < MaxAssemblySize)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxImageStoreBytes), MaxImageStoreBytes, $"WorkerPoolOptions.MaxImageStoreBytes must be at least MaxAssemblySize ({MaxAssemblySize} bytes): the pool must be able to hold the largest image it accepts.");
        }

        if (ReservationTimeout <= TimeSpan.Zero || ImageTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(ReservationTimeout), "WorkerPoolOptions.ReservationTimeout and ImageTimeout must be positive.");
        }
    }
}
