using System;
using System.Globalization;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote;

namespace CspNet;

/// <summary>
/// Chooses, once per program, whether named channels, barriers and buckets are shared with other
/// programs (<see cref="Init(string, string)"/>) or stay inside this one
/// (<see cref="InitStandAlone"/>), as in CSP.NET.
/// </summary>
/// <remarks>
/// Call one of the Init methods at the start of the program, before the first named getter
/// (<c>Factory.GetOne2OneIn&lt;T&gt;(name)</c> and the others). Calling Init again after a successful Init
/// throws; call <see cref="Shutdown"/> first. Thread-safe.
/// On the Generic Host, <c>services.AddCspNode()</c> takes the place of Init: the node it starts with
/// the host is this class's node until the host stops (see <see cref="Remote.Hosting.CspNodeHost"/>).
/// A program that ends normally (Main returns, <c>Environment.Exit</c>, SIGTERM) leaves as
/// <see cref="Shutdown"/> does, within five seconds: what it wrote is delivered, its ends
/// detach and its lease ends, so the programs it talked to see it leave, not get lost. Only a killed
/// or silent program counts as lost (<see cref="PeerLostException"/> at the others).
/// </remarks>
public static class CspManager
{
    private static readonly Lock Gate = new();
    private static CspNode? _node;
    private static int _exitHooked;


    // How long a program that ends without Shutdown() waits at most while it leaves.
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(5);

    // The node of the worker pool running the current shipped process (and of the processes it
    // starts: an AsyncLocal flows into threads and tasks started from it). It comes before the
    // program's own node so that a pool hosted in a program (tests, samples) gives the processes
    // it runs its own node, as a pool in its own program would.
    private static readonly AsyncLocal<CspNode?> Ambient = new();

    /// <summary>The node the named getters use: the worker pool's, inside a process a pool runs; else the program's.</summary>
    /// <exception cref="InvalidOperationException">Neither Init nor InitStandAlone has been called.</exception>
    public static CspNode Node => Ambient.Value ?? Volatile.Read(ref _node) ?? throw new InvalidOperationException(
        "Named channels, barriers and buckets need CspManager.Init(port, nameServerPort) (shared with other programs) " +
        "or CspManager.InitStandAlone() (this program only) first: call one at the start of the program " +
        "(on the Generic Host, services.AddCspNode() starts the node with the host).");

    /// <summary>Whether Init or InitStandAlone has been called (and not shut down).</summary>
    public static bool IsInitialized => Ambient.Value is not null || Volatile.Read(ref _node) is not null;

    /// <summary>The node a process started now would use, or null when none is set (no Init).</summary>
    internal static CspNode? CurrentOrNull => Ambient.Value ?? Volatile.Read(ref _node);

    /// <summary>Makes <paramref name="node"/> the node of this thread's flow (and what it starts) until the returned scope is disposed.</summary>
    internal static AmbientScope UseNode(CspNode node)
    {
        CspNode? previous = Ambient.Value;
        Ambient.Value = node;
        return new AmbientScope(previous);
    }

    /// <summary>Restores the ambient node a <see cref="UseNode"/> replaced.</summary>
    internal readonly struct AmbientScope(CspNode? previous) : IDisposable
    {
        public void Dispose() => Ambient.Value = previous;
    }

    /// <summary>
    /// Joins the distributed system: listens on <paramref name="port"/> of 127.0.0.1 and uses the
    /// NameServer on <paramref name="nameServerPort"/> of this machine (paper listing 3).
    /// </summary>
    /// <param name="port">This program's port, as text ("0": any free port).</param>
    /// <param name="nameServerPort">The NameServer's port on this machine, as text.</param>
    public static void Init(string port, string nameServerPort) =>
        Init(ParsePort(port, nameof(port)), ParsePort(nameServerPort, nameof(nameServerPort)));

    /// <summary>
    /// Joins the distributed system from a machine other programs reach at <paramref name="ip"/>,
    /// with the NameServer at <paramref name="nameServerIp"/> (paper listing 6). Binding to an address
    /// other than loopback requires a cluster key and the cluster's certificates, which this call
    /// reads from the environment (<c>CSPNET_CLUSTER_KEY</c>; <c>CSPNET_CERTIFICATE_FILE</c>,
    /// <c>CSPNET_CERTIFICATE_KEY_FILE</c> and <c>CSPNET_TRUSTED_CERTIFICATE_FILE</c>, PEM; the
    /// NameServer is then dialled over https), or use <see cref="Init(CspNodeOptions)"/> to give them.
    /// </summary>
    /// <param name="port">This program's port, as text.</param>
    /// <param name="nameServerPort">The NameServer's port, as text.</param>
    /// <param name="ip">This machine's address to listen on and to be dialled at.</param>
    /// <param name="nameServerIp">The NameServer's address.</param>
    public static void Init(string port, string nameServerPort, string ip, string nameServerIp) =>
        Init(ParsePort(port, nameof(port)), ParsePort(nameServerPort, nameof(nameServerPort)), ip, nameServerIp);

    /// <summary>Joins the distributed system on this machine; see <see cref="Init(string, string)"/>.</summary>
    /// <param name="port">This program's port (0: any free port).</param>
    /// <param name="nameServerPort">The NameServer's port on this machine.</param>
    public static void Init(int port, int nameServerPort) => Init(port, nameServerPort, "127.0.0.1", "127.0.0.1");

    /// <summary>Joins the distributed system; see <see cref="Init(string, string, string, string)"/>.</summary>
    /// <param name="port">This program's port (0: any free port).</param>
    /// <param name="nameServerPort">The NameServer's port.</param>
    /// <param name="ip">This machine's address to listen on and to be dialled at.</param>
    /// <param name="nameServerIp">The NameServer's address.</param>
    public static void Init(int port, int nameServerPort, string ip, string nameServerIp)
    {
        ArgumentException.ThrowIfNullOrEmpty(ip);
        ArgumentException.ThrowIfNullOrEmpty(nameServerIp);

        // The paper's calls carry no credentials: the environment does (docs/DEPLOYING.md), so a
        // listing runs unchanged across hosts, never with a secret on the command line.
        (X509Certificate2 Certificate, X509Certificate2 Authority)? tls = TlsFromEnvironment();
        Init(new CspNodeOptions
        {
            Port = port,
            Address = ip,
            NameServer = new UriBuilder(tls is null ? "http" : "https", nameServerIp, nameServerPort).Uri,
            ClusterKey = Environment.GetEnvironmentVariable("CSPNET_CLUSTER_KEY"),
            Certificate = tls?.Certificate,
            TrustedCertificate = tls?.Authority,
        });
    }

    /// <summary>The certificate files named by CSPNET_CERTIFICATE_FILE, CSPNET_CERTIFICATE_KEY_FILE and CSPNET_TRUSTED_CERTIFICATE_FILE, if set.</summary>
    private static (X509Certificate2 Certificate, X509Certificate2 Authority)? TlsFromEnvironment()
    {
        string? certificate = Environment.GetEnvironmentVariable("CSPNET_CERTIFICATE_FILE");
        string? authority = Environment.GetEnvironmentVariable("CSPNET_TRUSTED_CERTIFICATE_FILE");
        if (string.IsNullOrEmpty(certificate) && string.IsNullOrEmpty(authority))
        {
            return null;
        }

        if (string.IsNullOrEmpty(certificate) || string.IsNullOrEmpty(authority))
        {
            throw new ArgumentException("CSPNET_CERTIFICATE_FILE and CSPNET_TRUSTED_CERTIFICATE_FILE go together: this program's certificate (PEM, its key in CSPNET_CERTIFICATE_KEY_FILE) and the cluster's authority.");
        }

        return (X509Certificate2.CreateFromPemFile(certificate, Environment.GetEnvironmentVariable("CSPNET_CERTIFICATE_KEY_FILE")),
                X509CertificateLoader.LoadCertificateFromFile(authority));
    }

    /// <summary>Joins the distributed system with full options.</summary>
    /// <param name="options">Where to listen, where the NameServer is, timeouts, limits and the cluster key.</param>
#pragma warning disable RS0030 // The paper's synchronous API over the async one.
    public static void Init(CspNodeOptions options) => InitAsync(options).GetAwaiter().GetResult();
#pragma warning restore RS0030

    /// <summary>Joins the distributed system with full options, without holding a thread while it starts.</summary>
    /// <param name="options">Where to listen, where the NameServer is, timeouts, limits and the cluster key.</param>
    /// <param name="cancellationToken">Gives up starting.</param>
    /// <returns>A task that completes when this program is reachable and registered.</returns>
    public static async Task InitAsync(CspNodeOptions options, CancellationToken cancellationToken = default)
    {
        ThrowIfInitialized();
        CspNode node = await CspNode.StartAsync(options, cancellationToken).ConfigureAwait(false);
        if (!TrySet(node))
        {
            await node.DisposeAsync().ConfigureAwait(false);
            ThrowIfInitialized();
        }
    }

    /// <summary>
    /// Declares that this program shares nothing: named constructs are ordinary local ones and run
    /// at the core's speed, with no NameServer, socket or serializer (paper section 3.2).
    /// </summary>
    public static void InitStandAlone()
    {
        ThrowIfInitialized();
        if (!TrySet(CspNode.CreateStandAlone()))
        {
            ThrowIfInitialized();
        }
    }

    /// <summary>Leaves the distributed system (or ends stand-alone mode); Init may then be called again.</summary>
#pragma warning disable RS0030 // The paper's synchronous API over the async one.
    public static void Shutdown() => ShutdownAsync().AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030

    /// <summary>Leaves the distributed system without holding a thread while links close.</summary>
    /// <returns>A task that completes when everything is closed.</returns>
    public static ValueTask ShutdownAsync() => Interlocked.Exchange(ref _node, null) is { } node ? node.DisposeAsync() : default;

    /// <summary>Makes a node the host started (<c>AddCspNode</c>) the program's node; false if there is one already.</summary>
    internal static bool TryAttach(CspNode node) => TrySet(node);

    /// <summary>Forgets <paramref name="node"/> as the program's node, if it still is; the host disposes it.</summary>
    internal static void Detach(CspNode node) => Interlocked.CompareExchange(ref _node, null, node);

    private static bool TrySet(CspNode node)
    {
        lock (Gate)
        {
            if (_node is not null)
            {
                return false;
            }

            Volatile.Write(ref _node, node);
            if (Interlocked.Exchange(ref _exitHooked, 1) == 0)
            {
                AppDomain.CurrentDomain.ProcessExit += OnProcessExit;
            }

            return true;
        }
    }

    // Leaving costs a few round trips; without it the homes of this program's channels would see
    // the program lost and poison them, although everything it wrote was read.
    private static void OnProcessExit(object? sender, EventArgs e)
    {
        if (Interlocked.Exchange(ref _node, null) is not { } node)
        {
            return;
        }

        try
        {
#pragma warning disable RS0030 // Process exit: a bounded wait for the node to leave.
            node.DisposeAsync().AsTask().Wait(ExitTimeout);
#pragma warning restore RS0030
        }
#pragma warning disable CA1031 // The process is ending: nothing is left to report a failure to leave to.
        catch (Exception)
#pragma warning restore CA1031
        {
        }
    }

    private static void ThrowIfInitialized()
    {
        if (Volatile.Read(ref _node) is { } node)
        {
            throw new InvalidOperationException(
                $"CspManager is already initialized ({(node.IsDistributed ? $"distributed, port {node.Port}" : "stand-alone")}). Call CspManager.Shutdown() first to change it.");
        }
    }

    private static int ParsePort(string text, string parameter) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int port) && port is >= 0 and <= 65535
            ? port
            : throw new ArgumentException($"'{text}' is not a port number (0..65535).", parameter);
}
