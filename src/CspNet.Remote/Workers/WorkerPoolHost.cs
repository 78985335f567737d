using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.Internal.Workers;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CspNet.Remote.Workers;

/// <summary>
/// A worker pool running inside this process, for tests, samples and programs that lend their
/// own cores: it listens, joins the NameServer, and runs the processes <c>DistParallel</c> clients
/// ship to it, each on its own thread, with named constructs resolved on the pool's own node.
/// </summary>
/// <remarks>
/// It reads no configuration files or environment variables. For a standalone pool, run the
/// <c>WorkerPoolService</c> program (docs/WORKERPOOL.md). Running shipped code is remote code
/// execution by design: read docs/SECURITY.md before binding anything but 127.0.0.1.
/// </remarks>
public sealed class WorkerPoolHost : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly PoolRuntime _pool;
    private int _disposed;

    private WorkerPoolHost(WebApplication app, PoolRuntime pool, int port, CspNode node)
    {
        _app = app;
        _pool = pool;
        Port = port;
        Node = node;
        string host = pool.Options.AdvertisedHost ?? pool.Options.Address;
        Uri = new UriBuilder(pool.Options.Certificate is null ? Uri.UriSchemeHttp : Uri.UriSchemeHttps, host, port).Uri;
    }

    /// <summary>The port the pool's WorkerPool service listens on (the one picked when the options asked for 0).</summary>
    public int Port { get; }

    /// <summary>The address clients dial.</summary>
    public Uri Uri { get; }

    /// <summary>The pool's name.</summary>
    public string Name => _pool.Name;

    /// <summary>The node the pool's processes use for named channels, barriers and buckets.</summary>
    public CspNode Node { get; }

    /// <summary>The number of workers free now.</summary>
    public int FreeWorkers => _pool.FreeWorkers;

    /// <summary>Starts a worker pool and registers it at the NameServer.</summary>
    /// <param name="options">Where to listen, the NameServer, workers and authentication.</param>
    /// <param name="cancellationToken">Cancels starting.</param>
    /// <returns>The running pool; dispose it to stop.</returns>
    /// <exception cref="ArgumentException">The options are wrong (the message says what to change).</exception>
    public static Task<WorkerPoolHost> StartAsync(WorkerPoolOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return StartAsync(options, new CodeCacheStore(options.IdleUnload, options.MaxImageStoreBytes), cancellationToken);
    }

    internal static async Task<WorkerPoolHost> StartAsync(WorkerPoolOptions options, IShippedCode code, CancellationToken cancellationToken)
    {
        options.Validate();
        WebApplicationBuilder builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions { ApplicationName = typeof(WorkerPoolHost).Assembly.GetName().Name });

        // Embedded in the user's program: Ctrl+C and SIGTERM stay the program's to handle.
        builder.Services.AddSingleton<IHostLifetime, NoHostLifetime>();
        builder.WebHost.UseKestrelCore().ConfigureKestrel(kestrel => kestrel.ListenForWorkerPool(options));
        builder.WebHost.UseKestrelHttpsConfiguration();
        builder.Services.AddRouting();
        builder.Services.AddSingleton(options.LoggerFactory ?? NullLoggerFactory.Instance);
        builder.Services.AddSingleton(typeof(ILogger<>), typeof(Logger<>));
        builder.Services.AddCspWorkerPool(options, code);
        WebApplication app = builder.Build();
        app.MapCspWorkerPool();
        try
        {
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        PoolRuntime pool = app.Services.GetRequiredService<PoolRuntime>();
        string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        return new WorkerPoolHost(app, pool, new Uri(address).Port, await pool.Ready.ConfigureAwait(false));
    }

    /// <summary>Leaves the NameServer and stops listening. Processes still running keep their threads until they end.</summary>
    /// <returns>A task that completes when the pool has stopped.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(2));
        try
        {
            await _app.StopAsync(timeout.Token).ConfigureAwait(false);
        }
        finally
        {
            await _app.DisposeAsync().ConfigureAwait(false);
        }
    }
}
