using System;
using System.Collections.Generic;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote;

/// <summary>
/// How a program joins a distributed CspNet system: where its own endpoint listens, where the
/// NameServer is, and the limits and timeouts of its links to other programs.
/// </summary>
/// <remarks>Read once by <see cref="CspNode.StartAsync"/>; changing an instance afterwards has no effect.</remarks>
public sealed class CspNodeOptions
{
    /// <summary>The configuration section <c>services.AddCspNode()</c> binds the options from: <c>CspNet:Node</c>.</summary>
    public const string SectionName = "CspNet:Node";

    /// <summary>
    /// The IP address this program's endpoint binds to. Default <c>127.0.0.1</c>: only programs on
    /// this machine can reach it. Any other address exposes it and requires <see cref="ClusterKey"/>.
    /// </summary>
    public string Address { get; set; } = "127.0.0.1";

    /// <summary>The TCP port of this program's endpoint; 0 (the default) picks a free port.</summary>
    public int Port { get; set; }

    /// <summary>
    /// The host name or address other programs dial to reach this one, if not <see cref="Address"/>
    /// (required when binding to <c>0.0.0.0</c> or <c>::</c>).
    /// </summary>
    public string? AdvertisedHost { get; set; }

    /// <summary>The NameServer's address. Default <c>http://127.0.0.1:9090</c>.</summary>
    public Uri NameServer { get; set; } = new("http://127.0.0.1:9090");

    /// <summary>
    /// Further addresses of the same NameServer: replicas that share one registry (etcd, see
    /// docs/NAMESERVER.md). When the NameServer in use is unreachable, calls move to the next
    /// address at once; the program's lease and names carry over (or are registered again at a
    /// replica that did not share them). Empty by default. A host name with several addresses in
    /// <see cref="NameServer"/> works too: each new connection tries them in turn.
    /// </summary>
    public IList<Uri> NameServerReplicas { get; } = [];

    /// <summary>
    /// How long a peer program (or the NameServer) may stay silent before every party blocked on it
    /// fails with <see cref="PeerLostException"/>. Default 5 seconds. A program that exits or is killed
    /// is noticed at once; this bound covers a machine or network that disappears without a word.
    /// It also bounds setting up a link (connecting, and with TLS the handshake, which this program's
    /// server allows at least 10 seconds): raise it where programs far outnumber the cores.
    /// </summary>
    public TimeSpan PeerTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The most connections this program's endpoint holds open at once (peer programs share one
    /// connection per pair, so this bounds the peers, and any client, that can hold it). A
    /// connection beyond it is closed as soon as it is accepted. Default 1,000.
    /// </summary>
    public int MaxConnections { get; set; } = 1000;

    /// <summary>
    /// How long the NameServer may stay unreachable while this program waits for it (to resolve or
    /// register a name) before the call fails. Default 5 seconds.
    /// </summary>
    public TimeSpan NameServerTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Values larger than this are sent in chunks of this size. Default 1 MiB.</summary>
    public int ChunkSize { get; set; } = 1 << 20;

    /// <summary>
    /// The largest value, in encoded bytes, this program sends or accepts. Default 256 MiB. A larger
    /// value fails its write with an exception (locally) or RESOURCE_EXHAUSTED (remotely).
    /// </summary>
    public long MaxValueSize { get; set; } = 256L << 20;

    /// <summary>
    /// The most operations one peer program may have running at once on the constructs this
    /// program hosts (blocked reads, writes, barrier syncs, selections' watches and reservations,
    /// over its link). One beyond it fails at once with RESOURCE_EXHAUSTED, at that program, and the
    /// link serves on. Each running operation costs this program about a kilobyte. Default 100,000.
    /// </summary>
    public int MaxOperationsPerLink { get; set; } = 100_000;

    /// <summary>
    /// The most bytes of values (encoded) one peer program may have held here at once: values of
    /// its writes that wait for a reader, and values whose parts are still arriving. A write that
    /// would go beyond it fails at once with RESOURCE_EXHAUSTED, at that program (nothing written),
    /// and the link serves on; a program that sends parts of more than this without finishing the
    /// values loses its link. One value up to <see cref="MaxValueSize"/> is always admitted.
    /// Default 1 GiB.
    /// </summary>
    public long MaxBytesPerLink { get; set; } = 1L << 30;

    /// <summary>
    /// The most ends other programs may have attached at once to one construct this program hosts
    /// (a named channel, barrier or bucket). One more is refused with RESOURCE_EXHAUSTED at the
    /// getter. Default 10,000.
    /// </summary>
    public int MaxEndsPerName { get; set; } = 10_000;

    /// <summary>
    /// A shared secret every program of the system (and the NameServer) is given; calls without it
    /// are refused with UNAUTHENTICATED. Required when <see cref="Address"/> is not a loopback
    /// address: an exposed endpoint must not serve strangers. Null (the default): this user's own
    /// key (created on first use in <c>$XDG_RUNTIME_DIR/cspnet/cluster.key</c> or
    /// <c>~/.cspnet/cluster.key</c>, readable by this user only), so that only this user's
    /// programs, NameServer and pools can talk to each other. To share with other users, give
    /// every party the same key. See docs/SECURITY.md.
    /// </summary>
    public string? ClusterKey { get; set; }

    /// <summary>
    /// This program's certificate, with its private key, issued by the cluster's authority
    /// (<see cref="TrustedCertificate"/>) for the address other programs dial (an IP address or DNS
    /// name in its subject alternative names). When set, this program's endpoint speaks only TLS;
    /// with <see cref="TrustedCertificate"/> too it requires the callers' certificates from that
    /// authority (mutual TLS), and presents its own when it dials. Null (the default): plain
    /// HTTP/2, which only a loopback <see cref="Address"/> allows: on any other address the cluster
    /// key and every value would travel in clear text. See docs/DEPLOYING.md.
    /// </summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? Certificate { get; set; }

    /// <summary>
    /// The cluster's certificate authority (or a single program's own certificate, pinned). When
    /// set, this program dials every other program, and a <c>https://</c> NameServer, over TLS, and
    /// accepts only certificates it issued for server use and for the address dialled (the
    /// machine's trusted roots play no part). Null (the default): links are plain HTTP/2, allowed
    /// to carry the cluster key only to this machine.
    /// </summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? TrustedCertificate { get; set; }

    /// <summary>
    /// The token this program presents to worker pools (<c>WorkerPoolOptions.Token</c>) when
    /// <c>DistParallel</c> runs processes on them. Null: none (pools that require one refuse).
    /// </summary>
    public string? WorkerPoolToken { get; set; }

    /// <summary>
    /// For pools that serve TLS: the certificate (or the authority that issued it) their
    /// certificates must chain to. Null: the machine's trusted roots decide.
    /// </summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? WorkerPoolTrustedCertificate { get; set; }

    /// <summary>For pools that require mutual TLS: this program's client certificate, with its private key.</summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? WorkerPoolClientCertificate { get; set; }

    /// <summary>
    /// Whether writes to buffered named channels homed elsewhere stream their values (default
    /// <see langword="true"/>). The home reserves slots of the channel's buffer for each remote
    /// writer that writes (credits); a write that finds a credit completes as soon as its value is
    /// handed to the link, without waiting for the home's answer, so a burst of writes costs about
    /// what the bytes do rather than a round trip each. The buffer's capacity stays exact: reserved
    /// slots count as full for every other writer. A write without a credit, and every write to an
    /// unbuffered channel or one with a buffer of unknown capacity, waits for the home as before.
    /// </summary>
    /// <remarks>
    /// A value whose write completed this way is in the home's buffer or on its way there: if the
    /// link is lost meanwhile it is lost with it, as values in a program's own buffer are lost when
    /// that program dies, and the next operation fails with <see cref="PeerLostException"/>. Set
    /// <see langword="false"/> for a write that returns only once the home has the value. A home
    /// with this option off grants no credits; a writer with it off asks for none. A <c>byte[]</c>
    /// value on the bulk lane is sent from the writer's own array, after its write has completed:
    /// the writer must not change an array it wrote (as with a local channel, whose reader gets the
    /// array itself). See docs/DISTRIBUTED.md.
    /// </remarks>
    public bool PipelineBufferedWrites { get; set; } = true;

    /// <summary>
    /// Whether large values travel on a bulk lane beside the link (default <see langword="true"/>):
    /// to a program on this host, a Unix domain socket in a directory only this user can enter; to
    /// a program on another host, a TCP connection to <see cref="Address"/> at
    /// <see cref="BulkLanePort"/>, over TLS with <see cref="Certificate"/> and
    /// <see cref="TrustedCertificate"/> whenever the link is TLS. Either is opened with a secret
    /// handed out over the link. Only its bytes move there: every answer (the reader took the
    /// value, cancellation, poison, a lost program) still comes on the link, so a write means
    /// exactly what it means without the lane. A lane that fails is dropped and its values are sent
    /// again on the link, once. Both programs must have it on; a program that does not know it
    /// (another client of the Link protocol) uses the link alone. The default can be turned off
    /// process-wide with the <see cref="AppContext"/> switch <c>CspNet.Remote.DisableBulkLane</c>.
    /// See docs/DISTRIBUTED.md.
    /// </summary>
    public bool BulkLane { get; set; } = !(AppContext.TryGetSwitch(DisableBulkLaneSwitch, out bool off) && off);

    /// <summary>
    /// The smallest encoded value, in bytes, a plain write sends on the bulk lane (default 32 KiB);
    /// smaller values and writes that spend a credit of a buffered channel stay on the link, which
    /// is as fast for them. At least 1 KiB.
    /// </summary>
    public int BulkLaneThreshold { get; set; } = 32 << 10;

    /// <summary>
    /// The TCP port of the bulk lane for programs on other hosts, on <see cref="Address"/>; 0 (the
    /// default) picks a free port (other programs learn it over the link). Set it where a firewall
    /// must let the lane through. Unused when <see cref="BulkLane"/> is off.
    /// </summary>
    public int BulkLanePort { get; set; }

    /// <summary>
    /// Whether this program, as a client, uses a home's Unix domain socket lane when the home is on
    /// this host (the default); off, it uses the home's TCP lane, as from another host. For tests.
    /// </summary>
    internal bool LaneOverUnixSocket { get; set; } = true;

    /// <summary>A label for this program in other programs' logs and error messages. Default: process name and id.</summary>
    public string? ProgramLabel { get; set; }

    /// <summary>Where the node logs (links opened and lost, refused requests). Default: nowhere.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>The AppContext switch that makes <see cref="BulkLane"/> default to off.</summary>
    internal const string DisableBulkLaneSwitch = "CspNet.Remote.DisableBulkLane";

    internal CspNodeOptions Validated()
    {
        if (!System.Net.IPAddress.TryParse(Address, out System.Net.IPAddress? ip))
        {
            throw new ArgumentException($"CspNodeOptions.Address must be an IP address to bind to (got '{Address}'). Use 127.0.0.1 for this machine only.", nameof(Address));
        }

        if (Port is < 0 or > 65535)
        {
            throw new ArgumentOutOfRangeException(nameof(Port), Port, "CspNodeOptions.Port must be 0 (any free port) or 1..65535.");
        }

        if (!System.Net.IPAddress.IsLoopback(ip) && string.IsNullOrEmpty(ClusterKey))
        {
            throw new ArgumentException(
                $"Binding to {Address} exposes this program to the network: set CspNodeOptions.ClusterKey (the same secret in every program and the NameServer) so that strangers are refused.",
                nameof(ClusterKey));
        }

        if (Certificate is { HasPrivateKey: false })
        {
            throw new ArgumentException("CspNodeOptions.Certificate has no private key: load it with its key (for example X509Certificate2.CreateFromPemFile(certificateFile, keyFile)).", nameof(Certificate));
        }

        if (!System.Net.IPAddress.IsLoopback(ip) && Certificate is null)
        {
            throw new ArgumentException(
                $"Binding to {Address} would send the cluster key and every value in clear text: set CspNodeOptions.Certificate (issued by the cluster's authority) and CspNodeOptions.TrustedCertificate (that authority), as docs/DEPLOYING.md shows.",
                nameof(Certificate));
        }

        ArgumentNullException.ThrowIfNull(NameServer);
        if (!Internal.Security.Certificates.MayCarrySecrets(NameServer))
        {
            throw new ArgumentException(
                $"The NameServer {NameServer} is on another machine over plain HTTP: the cluster key would travel in clear text. Give the NameServer a TLS certificate, dial it as https://, and set CspNodeOptions.TrustedCertificate.",
                nameof(NameServer));
        }

        if ((ip.Equals(System.Net.IPAddress.Any) || ip.Equals(System.Net.IPAddress.IPv6Any)) && string.IsNullOrEmpty(AdvertisedHost))
        {
            throw new ArgumentException($"Binding to {Address} listens on every interface: set CspNodeOptions.AdvertisedHost to the address other programs should dial.", nameof(AdvertisedHost));
        }

        foreach (Uri replica in NameServerReplicas)
        {
            if (replica is null || !replica.IsAbsoluteUri || (replica.Scheme != Uri.UriSchemeHttp && replica.Scheme != Uri.UriSchemeHttps))
            {
                throw new ArgumentException($"CspNodeOptions.NameServerReplicas holds '{replica}', which is not an absolute http:// or https:// address of a NameServer.", nameof(NameServerReplicas));
            }
        }

        if (PeerTimeout <= TimeSpan.Zero || NameServerTimeout <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(PeerTimeout), "CspNodeOptions.PeerTimeout and NameServerTimeout must be positive.");
        }

        if (MaxConnections < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxConnections), MaxConnections, "CspNodeOptions.MaxConnections must be at least 1.");
        }

        if (ChunkSize is < 1024 or > (16 << 20))
        {
            throw new ArgumentOutOfRangeException(nameof(ChunkSize), ChunkSize, "CspNodeOptions.ChunkSize must be between 1 KiB and 16 MiB.");
        }

        if (BulkLanePort is < 0 or > 65535)
        {
            throw new ArgumentOutOfRangeException(nameof(BulkLanePort), BulkLanePort, "CspNodeOptions.BulkLanePort must be 0 (any free port) or 1..65535.");
        }

        if (BulkLaneThreshold < 1024)
        {
            throw new ArgumentOutOfRangeException(nameof(BulkLaneThreshold), BulkLaneThreshold, "CspNodeOptions.BulkLaneThreshold must be at least 1 KiB: smaller values are faster on the link.");
        }

        if (MaxValueSize < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxValueSize), MaxValueSize, "CspNodeOptions.MaxValueSize must be positive.");
        }

        if (MaxOperationsPerLink < 1 || MaxBytesPerLink < 1 || MaxEndsPerName < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxOperationsPerLink), "CspNodeOptions.MaxOperationsPerLink, MaxBytesPerLink and MaxEndsPerName must be positive.");
        }

        var validated = (CspNodeOptions)MemberwiseClone();
        validated.ClusterKey = Internal.Security.ClusterKeys.Effective(ClusterKey);
        return validated;
    }
}
