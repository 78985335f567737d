using System;
using System.Globalization;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using CspNet.NameServer.Internal.StatusReporting;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CspNet.NameServer;

/// <summary>A NameServer running inside this process, for tests, samples and single-machine programs.</summary>
/// <remarks>
/// It listens with HTTP/2 only and without TLS (h2c), reads no configuration files or
/// environment variables, and logs only to <see cref="NameServerHostOptions.LoggerFactory"/>.
/// Unless turned off, it also serves a status page over HTTP/1.1 on a second endpoint
/// (<see cref="StatusUri"/>; browsers do not speak HTTP/2 without TLS).
/// For a standalone NameServer, run the <c>NameServer</c> service (docs/NAMESERVER.md).
/// </remarks>
public sealed class NameServerHost : IAsyncDisposable
{
    private const string StatusPath = "/status";
    private readonly WebApplication _app;
    private int _stopped;
    private int _disposed;

    private NameServerHost(WebApplication app, IPAddress address, int port, INameRegistry registry, IPEndPoint? status)
    {
        _app = app;
        Address = address;
        Port = port;
        Registry = registry;
        Uri = HttpUri(address, port, "");
        StatusUri = status is null ? null : HttpUri(status.Address, status.Port, StatusPath);
    }

    /// <summary>The address the host listens on.</summary>
    public IPAddress Address { get; }

    /// <summary>The port the host listens on (the one picked when the options asked for 0).</summary>
    public int Port { get; }

    /// <summary>The address clients dial: <c>http://address:port</c>.</summary>
    public Uri Uri { get; }

    /// <summary>The status page (HTML; <c>status.json</c> beside it), or <see langword="null"/> when <see cref="NameServerStatusPageOptions.Enabled"/> is off.</summary>
    public Uri? StatusUri { get; }

    /// <summary>The registry the host serves.</summary>
    public INameRegistry Registry { get; }

    /// <summary>Starts a NameServer.</summary>
    /// <param name="options">Where to listen and the NameServer's settings; defaults when <see langword="null"/>.</param>
    /// <param name="cancellationToken">Cancels starting.</param>
    /// <returns>The running host; dispose it to stop.</returns>
    /// <exception cref="System.IO.IOException">The port is in use.</exception>
    public static async Task<NameServerHost> StartAsync(NameServerHostOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= new NameServerHostOptions();
        ArgumentNullException.ThrowIfNull(options.Address);
        ArgumentOutOfRangeException.ThrowIfNegative(options.Port);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(options.Port, 65535);
        options.NameServer.Validate();
        options.StatusPage.Validate();

        // The empty builder reads no appsettings.json, environment or command line: an embedded
        // server must not change behaviour with whatever directory or environment a test runs in.
        if (!IPAddress.IsLoopback(options.Address) && string.IsNullOrEmpty(options.NameServer.ClusterKey))
        {
            throw new ArgumentException(
                $"Listening on {options.Address} exposes the NameServer: set NameServerHostOptions.NameServer.ClusterKey (the secret every program is given) or listen on 127.0.0.1.",
                nameof(options));
        }

        NameServerStatusPageOptions page = options.StatusPage;
        if (page.Enabled && !IPAddress.IsLoopback(page.Address) && string.IsNullOrEmpty(options.NameServer.ClusterKey))
        {
            throw new ArgumentException(
                $"Serving the status page on {page.Address} exposes every name: set NameServerHostOptions.NameServer.ClusterKey (the page then asks for it), serve it on 127.0.0.1, or turn it off (StatusPage.Enabled = false).",
                nameof(options));
        }

        WebApplicationBuilder builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions { ApplicationName = typeof(NameServerHost).Assembly.GetName().Name });

        // Embedded in the user's program: Ctrl+C and SIGTERM stay the program's to handle.
        builder.Services.AddSingleton<Microsoft.Extensions.Hosting.IHostLifetime, CspNet.Remote.Internal.Hosting.NoHostLifetime>();
        // Kestrel binds these and then reports the ports it got (port 0) in their endpoints.
        ListenOptions? grpcListen = null, statusListen = null;
        builder.WebHost.UseKestrelCore().ConfigureKestrel(kestrel =>
        {
            kestrel.Limits.MaxConcurrentConnections = options.NameServer.MaxConnections;
            kestrel.Listen(options.Address, options.Port, listen =>
            {
                listen.Protocols = HttpProtocols.Http2;
                grpcListen = listen;
            });

            // Kestrel cannot tell HTTP/1.1 from HTTP/2 prior knowledge on one cleartext port
            // (dotnet/aspnetcore#56984), so the page gets an HTTP/1.1 endpoint of its own.
            if (page.Enabled)
            {
                kestrel.Listen(page.Address, page.Port, listen =>
                {
                    listen.Protocols = HttpProtocols.Http1;
                    statusListen = listen;
                });
            }
        });
        builder.Services.AddRouting();
        builder.Services.AddSingleton(options.LoggerFactory ?? NullLoggerFactory.Instance);
        builder.Services.AddSingleton(typeof(ILogger<>), typeof(Logger<>));
        builder.Services.Configure<HostOptions>(host => host.ShutdownTimeout = options.ShutdownTimeout);
        if (options.TimeProvider is not null)
        {
            builder.Services.AddSingleton(options.TimeProvider);
        }

        NameServerOptions settings = options.NameServer;
        builder.Services.AddCspNameServer(o =>
        {
            o.LeaseTtl = settings.LeaseTtl;
            o.MaxResolveWait = settings.MaxResolveWait;
            o.MaxLeases = settings.MaxLeases;
            o.MaxNames = settings.MaxNames;
            o.MaxConnections = settings.MaxConnections;
            o.ClusterKey = settings.ClusterKey;
        });
        builder.Services.Configure<NameServerStatusPageOptions>(o => o.Refresh = page.Refresh);
        options.ConfigureServices?.Invoke(builder.Services);

        WebApplication app = builder.Build();
        app.MapCspNameServer();
        if (page.Enabled)
        {
            app.MapCspNameServerStatus(StatusPath);
            app.MapGet("/", static context =>
            {
                context.Response.Redirect(StatusPath);
                return Task.CompletedTask;
            });
        }

        try
        {
            if (options.BeforeListening is { } prepare)
            {
                await prepare(app.Services.GetRequiredService<INameRegistry>()).ConfigureAwait(false);
            }

            await app.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        int port = grpcListen?.IPEndPoint?.Port ?? options.Port;
        return new NameServerHost(app, options.Address, port, app.Services.GetRequiredService<INameRegistry>(), statusListen?.IPEndPoint);
    }

    /// <summary>Stops listening; waiting Resolve calls end with UNAVAILABLE.</summary>
    /// <param name="cancellationToken">Ends the graceful part of stopping early.</param>
    /// <returns>A task that completes when the host has stopped.</returns>
    public async Task StopAsync(CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref _stopped, 1) == 0)
        {
            await _app.StopAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Stops the host if it is running and releases it.</summary>
    /// <returns>A task that completes when the host is released.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await StopAsync().ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }

    private static Uri HttpUri(IPAddress address, int port, string path)
    {
        string host = address.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? "[" + address + "]" : address.ToString();
        return new Uri("http://" + host + ":" + port.ToString(CultureInfo.InvariantCulture) + path);
    }
}
