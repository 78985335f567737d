using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Processes;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.NameServer;
using CspNet.Remote.Protocol;

namespace CspNet.Remote;

/// <summary>
/// One program's membership in a distributed CspNet system: its gRPC endpoint, its lease at the
/// NameServer, the named constructs it hosts and its links to the programs hosting the others.
/// <see cref="CspManager"/> keeps one for the whole program; create more only to run several
/// programs in one process (tests, samples).
/// </summary>
/// <remarks>
/// <para>
/// Where a named construct lives: as in CSP.NET, at its One end. The reading end of a One2One or
/// Any2One creates the channel and this program hosts it; the writing end of a One2Any does; an
/// Any2Any channel or a bucket is hosted by the first program that asks for it; a barrier by the
/// program that creates it with its enrolled count. The other ends wait for the name to be
/// registered, then attach over a link. Ends in the hosting program are the core's own ends.
/// </para>
/// <para>Thread-safe. Getters may be called from any process.</para>
/// </remarks>
public sealed partial class CspNode : IAsyncDisposable
{
    private readonly NodeRuntime _runtime;
    private readonly HomeDirectory _local = new();
    private readonly NodeServer? _server;
    private readonly NameServerClient? _names;
    private readonly PeerLinks? _links;
    private readonly string _advertisedHost = string.Empty;
    private int _disposed;

    private CspNode(NodeRuntime runtime, NodeServer? server, NameServerClient? names, string advertisedHost)
    {
        _runtime = runtime;
        _server = server;
        _names = names;
        _advertisedHost = advertisedHost;
        _links = server is null ? null : new PeerLinks(runtime);
        if (names is not null)
        {
            runtime.TakeHome = TakeHomeAsync;
            runtime.SettleTake = SettleTakeAsync;
            runtime.GiveHome = GiveHomeAsync;
            names.NameLost += (name, detail) => NameLost?.Invoke(this, new NameLostEventArgs(name, detail));
        }
    }

    /// <summary>
    /// Raised when a name this program registered now belongs to another program: after the
    /// NameServer restarted or this program's lease expired, the other program registered it
    /// before this one could register it again. Peers that resolve the name from then on reach the
    /// other program, so a program that must not be displaced silently should stop or alert here.
    /// Raised on a thread of the NameServer client; handlers must not block.
    /// </summary>
    public event EventHandler<NameLostEventArgs>? NameLost;

    /// <summary>Whether named constructs are shared with other programs (false after a stand-alone start).</summary>
    public bool IsDistributed => _server is not null;

    /// <summary>The TCP port this program's endpoint listens on (0 when stand-alone).</summary>
    public int Port => _server?.Port ?? 0;

    /// <summary>The label other programs see for this one.</summary>
    public string ProgramLabel => _runtime.ProgramLabel;

    /// <summary>The options the node was started with (validated copy).</summary>
    internal CspNodeOptions Options => _runtime.Options;

    /// <summary>This node's bulk lane endpoint; null when it offers none.</summary>
    internal ILaneRegistry? Lanes => _runtime.Lanes;

    /// <summary>This node's NameServer client; null when stand-alone.</summary>
    internal NameServerClient? Names => _names;

    /// <summary>This node's channels to worker pools (DistParallel).</summary>
    internal PoolChannels PoolChannels => Volatile.Read(ref _poolChannels) ?? CreatePoolChannels();

    private PoolChannels? _poolChannels;

    private PoolChannels CreatePoolChannels()
    {
        var channels = new PoolChannels(_runtime.Options);
        PoolChannels? existing = Interlocked.CompareExchange(ref _poolChannels, channels, null);
        if (existing is not null)
        {
            channels.Dispose();
            return existing;
        }

        return channels;
    }

    /// <summary>
    /// Starts this program's endpoint and joins the NameServer. Named constructs are then shared
    /// with every program that uses the same NameServer.
    /// </summary>
    /// <param name="options">Where to listen and where the NameServer is.</param>
    /// <param name="cancellationToken">Gives up starting.</param>
    /// <returns>The started node.</returns>
    /// <exception cref="ArgumentException">The options are inconsistent (the message says what to change).</exception>
    /// <exception cref="PeerLostException">The NameServer did not answer within <see cref="CspNodeOptions.NameServerTimeout"/>.</exception>
    public static async Task<CspNode> StartAsync(CspNodeOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        var runtime = new NodeRuntime(options.Validated());
        NodeServer server = await NodeServer.StartAsync(runtime, cancellationToken).ConfigureAwait(false);
        string host = runtime.Options.AdvertisedHost ?? runtime.Options.Address;
        NameServerClient? names = null;
        try
        {
            names = NameServerClients.Create(runtime, host, server.Port);
            await names.StartAsync(cancellationToken).ConfigureAwait(false);
            return new CspNode(runtime, server, names, host);
        }
        catch
        {
            if (names is not null)
            {
                await names.DisposeAsync().ConfigureAwait(false);
            }

            await server.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>
    /// A node that shares nothing: named constructs are ordinary local ones, found by name inside
    /// this program only. No socket is opened and no value is serialized.
    /// </summary>
    /// <returns>The stand-alone node.</returns>
    public static CspNode CreateStandAlone() => new(new NodeRuntime(new CspNodeOptions()), null, null, string.Empty);

    /// <summary>
    /// Leaves the system: hands each unbuffered Any2Any channel hosted here that other programs hold
    /// ends of to one of them (docs/DISTRIBUTED.md, "A moving home"), closes the links (their homes
    /// release this program's ends), stops the endpoint and ends the lease.
    /// </summary>
    /// <returns>A task that completes when everything is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // While the endpoint and the lease still serve: channels other programs use move to one of them.
        await HandOverHomesAsync().ConfigureAwait(false);

        if (_links is not null)
        {
            await _links.DisposeAsync().ConfigureAwait(false);
        }

        if (_names is not null)
        {
            await _names.DisposeAsync().ConfigureAwait(false);
        }

        _poolChannels?.Dispose();

        if (_server is not null)
        {
            await _server.DisposeAsync().ConfigureAwait(false);
        }
    }

    // ---- the getters' common path --------------------------------------------------------------

    private readonly record struct EndRequest(string Name, NameKind Kind, bool Creates, string ValueType, Role Role, bool Local, int BufferCapacity);

    private ValueTask<TEnd> GetAsync<TEnd>(
        EndRequest request,
        Func<Home> create,
        Func<Home, TEnd> localEnd,
        Func<PeerLink, uint, TEnd> remoteEnd,
        CancellationToken cancellationToken) =>
        ProcessCancellation.Current is { } cancellation
            ? GetForProcessAsync(request, create, localEnd, remoteEnd, cancellation, cancellationToken)
            : GetCoreAsync(request, create, localEnd, remoteEnd, cancellationToken);

    /// <summary>
    /// A getter called by a process of a <see cref="DistParallel"/>: cancelling the run stops its
    /// wait, and poisons the end it got (docs/WORKERPOOL.md, Cancelling a run).
    /// </summary>
    private async ValueTask<TEnd> GetForProcessAsync<TEnd>(
        EndRequest request,
        Func<Home> create,
        Func<Home, TEnd> localEnd,
        Func<PeerLink, uint, TEnd> remoteEnd,
        ProcessCancellation cancellation,
        CancellationToken cancellationToken)
    {
        using var either = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, cancellation.Token);
        TEnd end = await GetCoreAsync(request, create, localEnd, remoteEnd, either.Token).ConfigureAwait(false);
        cancellation.Track(end as IPoisonable);
        return end;
    }

    private async ValueTask<TEnd> GetCoreAsync<TEnd>(
        EndRequest request,
        Func<Home> create,
        Func<Home, TEnd> localEnd,
        Func<PeerLink, uint, TEnd> remoteEnd,
        CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        NameRules.Validate(request.Name);
        bool distributed = _names is not null && !request.Local;
        HomeDirectory directory = distributed ? _runtime.Homes : _local;
        NameRecord? record = null;
        if (request.Creates)
        {
            (Home home, bool created) = directory.AddOrJoin(request.Name, create, request.Kind.JoinsExisting());
            if (!created || !distributed)
            {
                return localEnd(home);
            }

            bool registered = false;
            try
            {
                (record, registered) = await _names!.RegisterRecordAsync(
                    new NameRecord(request.Name, request.Kind.WireName(), request.ValueType, _advertisedHost, Port, request.BufferCapacity),
                    request.Kind.JoinsExisting(),
                    cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                if (!registered)
                {
                    // Someone else hosts it (a joining kind) or registering failed: this copy must not serve attaches.
                    directory.Remove(home);
                }
            }

            if (registered)
            {
                return localEnd(home);
            }
        }
        else if (!distributed)
        {
            return localEnd(await directory.WaitAsync(request.Name, cancellationToken).ConfigureAwait(false));
        }
        else if (directory.TryGetValue(request.Name, out Home? hosted))
        {
            return localEnd(hosted);
        }

        record ??= await _names!.ResolveRecordAsync(request.Name, cancellationToken).ConfigureAwait(false);
        if (record.Kind != request.Kind.WireName() || record.ValueType != request.ValueType)
        {
            throw NameRules.Mismatch(request.Name, record.Kind, record.ValueType, request.Kind.WireName(), request.ValueType);
        }

        if (record.Port == Port && string.Equals(record.Host, _advertisedHost, StringComparison.OrdinalIgnoreCase))
        {
            // Hosted here after all (registered by another process of this program meanwhile).
            return localEnd(await directory.WaitAsync(request.Name, cancellationToken).ConfigureAwait(false));
        }

        PeerLink link;
        try
        {
            link = await _links!.GetAsync(record.Host, record.Port, cancellationToken).ConfigureAwait(false);
        }
        catch (PeerLostException e)
        {
            throw new PeerLostException(
                $"Getting '{request.Name}' failed: its home, the program at {record.Host}:{record.Port} (the address it gave the NameServer), cannot be reached from '{ProgramLabel}'. "
                + $"Check that it runs and that this machine reaches that address (CspNodeOptions.AdvertisedHost in that program). {e.Message}",
                e);
        }

        uint handle = await link.AttachAsync(request.Name, request.Kind, request.ValueType, request.Role, cancellationToken).ConfigureAwait(false);
        return remoteEnd(link, handle);
    }

    private static TEnd Wait<TEnd>(ValueTask<TEnd> pending, string getter)
    {
        // Checked even when the answer is already there: a misuse must not depend on timing.
        ProcessContext.ThrowIfBlockingInAsyncProcess(getter + "(name)", getter + "Async(name)");
#pragma warning disable RS0030 // The paper's synchronous getters over the async ones (refused inside async processes above).
        return pending.AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }
}
