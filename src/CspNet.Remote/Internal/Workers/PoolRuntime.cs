using System;
using System.Linq;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;
using CspNet.Remote.Workers;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// One worker pool: its workers (counted, not threads: a thread is started per job), its code
/// store, the <see cref="CspNode"/> its shipped processes use, and its registration at the NameServer.
/// </summary>
/// <remarks>
/// <para>
/// The pool is authoritative for its free workers: <see cref="TryReserve"/> is the only way a
/// worker is taken. The NameServer's count is a hint, updated after each change by one loop that
/// sends only the latest count (changes while a call is in flight are coalesced), so no job waits
/// for the NameServer.
/// </para>
/// <para>
/// Registration rides on the node's lease: the pool is purged with it when the program dies, and
/// registered again with the names when the NameServer restarts (NameServerClient).
/// </para>
/// </remarks>
internal sealed partial class PoolRuntime : IHostedLifecycleService, IAsyncDisposable
{
    private readonly WorkerPoolOptions _options;
    private readonly IServer _server;
    private readonly Lock _lock = new();
    private readonly Channel<bool> _freeChanged = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropWrite });
    private readonly TaskCompletionSource<CspNode> _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _stopping = new();
    private CspNode? _node;
    private Task _updates = Task.CompletedTask;
    private int _free;
    private int _disposed;

    public PoolRuntime(WorkerPoolOptions options, IServer server, IShippedCode code, ILoggerFactory? loggerFactory = null)
    {
        _options = options;
        _server = server;
        Code = code;
        _free = options.Workers;
        LoggerFactory = options.LoggerFactory ?? loggerFactory ?? NullLoggerFactory.Instance;
        Logger = LoggerFactory.CreateLogger("CspNet.Remote.Workers.WorkerPool");
    }

    internal WorkerPoolOptions Options => _options;

    internal IShippedCode Code { get; }

    internal ILoggerFactory LoggerFactory { get; }

    internal ILogger Logger { get; }

    internal string Name => _options.EffectiveName;

    /// <summary>The pool's node, once it has joined the NameServer.</summary>
    internal Task<CspNode> Ready => _ready.Task;

    internal int FreeWorkers
    {
        get
        {
            lock (_lock)
            {
                return _free;
            }
        }
    }

    /// <summary>Takes up to <paramref name="wanted"/> free workers; returns how many it took.</summary>
    internal int TryReserve(int wanted)
    {
        int taken;
        lock (_lock)
        {
            taken = Math.Min(wanted, _free);
            _free -= taken;
        }

        if (taken > 0)
        {
            _freeChanged.Writer.TryWrite(true);
        }

        return taken;
    }

    /// <summary>Gives back workers a job finished on, or that a client did not use.</summary>
    internal void Return(int workers)
    {
        if (workers <= 0)
        {
            return;
        }

        lock (_lock)
        {
            _free = Math.Min(_free + workers, _options.Workers);
        }

        _freeChanged.Writer.TryWrite(true);
    }

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>After the server listens (its port is known): joins the NameServer and registers the pool.</summary>
    public async Task StartedAsync(CancellationToken cancellationToken)
    {
        string address = _server.Features.Get<IServerAddressesFeature>()?.Addresses.FirstOrDefault()
            ?? throw new InvalidOperationException("The worker pool's server reports no address.");
        int port = new Uri(address).Port;
        try
        {
            CspNode node = await CspNode.StartAsync(
                new CspNodeOptions
                {
                    Address = _options.Address,
                    AdvertisedHost = _options.AdvertisedHost,
                    NameServer = _options.NameServer,
                    ClusterKey = _options.ClusterKey,
                    PeerTimeout = _options.PeerTimeout,
                    LoggerFactory = LoggerFactory,
                    ProgramLabel = "workerpool " + Name,

                    // Shipped processes link to other programs like any program: over TLS with the
                    // pool's certificate when the cluster's authority is the one it trusts.
                    Certificate = _options.ClientCertificateAuthority is null ? null : _options.Certificate,
                    TrustedCertificate = _options.Certificate is null ? null : _options.ClientCertificateAuthority,
                },
                cancellationToken).ConfigureAwait(false);
            _node = node;
            var entry = new WorkerPoolEntry
            {
                Name = Name,
                Endpoint = new LinkEndpoint(_options.AdvertisedHost ?? _options.Address, port),
                Tls = _options.Certificate is not null,
                Workers = _options.Workers,
                FreeWorkers = FreeWorkers,
            };
            await node.Names!.RegisterPoolAsync(entry, cancellationToken).ConfigureAwait(false);
            LogRegistered(Logger, Name, entry.Endpoint, _options.Workers, _options.NameServer);
            _ready.TrySetResult(node);
            _updates = UpdateLoopAsync(node.Names, _stopping.Token);
        }
        catch (Exception e)
        {
            _ready.TrySetException(e);
            throw;
        }
    }

    public Task StoppingAsync(CancellationToken cancellationToken) => DisposeAsync().AsTask();

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>Leaves the NameServer (the pool disappears at once) and unloads shipped code. Jobs still running keep their threads until they end.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _ready.TrySetException(new ObjectDisposedException(nameof(PoolRuntime), "The worker pool is stopping."));
        await _stopping.CancelAsync().ConfigureAwait(false);
        _freeChanged.Writer.TryComplete();
        await _updates.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        if (_node is not null)
        {
            await _node.DisposeAsync().ConfigureAwait(false);
        }

        Code.Dispose();
        _stopping.Dispose();
    }

    private async Task UpdateLoopAsync(NameServerClient names, CancellationToken cancellationToken)
    {
        // Waits for a change, then sends the count as it is now: a burst of changes costs one call.
        while (await _freeChanged.Reader.WaitToReadAsync(cancellationToken).ConfigureAwait(false))
        {
            _freeChanged.Reader.TryRead(out _);
            try
            {
                await names.UpdatePoolAsync(FreeWorkers, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is NameServerUnavailableException or LeaseNotFoundException or ArgumentException)
            {
                // A hint only: the next change (or the next renewal's re-registration) corrects it.
                LogUpdateFailed(Logger, e.Message);
            }
        }
    }

    [LoggerMessage(100, LogLevel.Information, "Worker pool '{Pool}' listening at {Endpoint} with {Workers} workers, registered at the NameServer {NameServer}")]
    private static partial void LogRegistered(ILogger logger, string pool, LinkEndpoint endpoint, int workers, Uri nameServer);

    [LoggerMessage(101, LogLevel.Warning, "Telling the NameServer the pool's free workers failed: {Message}")]
    private static partial void LogUpdateFailed(ILogger logger, string message);
}
