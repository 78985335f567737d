using System;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>
/// The bulk lane's clear-text listeners (the Unix socket, and the TCP port when the link has no
/// certificates) in a Kestrel server of their own, beside the Link endpoint's.
/// </summary>
/// <remarks>
/// Their own server because of one transport setting the Link's HTTP/2 must not have: inline
/// scheduling. Kestrel's socket receive loop then runs the lane's reader itself when it fills the
/// connection's pipe, instead of handing every received block to another ThreadPool thread. The
/// reader may run there because it never blocks: it copies bytes into a value's array and hands
/// the value to its inbox, whose waiting Write resumes on its own thread. A TLS lane port stays on
/// the Link endpoint's server with Kestrel's HTTPS middleware: the lane's own <c>SslStream</c>
/// decrypting on this server's receive thread filled less (the receive and the decryption then take
/// turns on one thread), and with ThreadPool scheduling no more than the middleware (docs/DISTRIBUTED.md).
/// At most <see cref="CspNodeOptions.MaxConnections"/> lane connections at once over both listeners
/// (counted by <see cref="BulkLaneHost"/>); past that a new one is closed at once.
/// </remarks>
internal sealed class LaneServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private LaneServer(WebApplication app, int tcpPort)
    {
        _app = app;
        TcpPort = tcpPort;
    }

    /// <summary>The TCP port the lane listens on here (port 0 asked: the one bound); 0 when it listens on the Link endpoint's server.</summary>
    internal int TcpPort { get; }

    internal static async Task<LaneServer> StartAsync(BulkLaneHost lanes, CspNodeOptions options, bool overTcp, CancellationToken cancellationToken)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [], ApplicationName = "CspNet.Remote.Lane" });
        builder.Logging.ClearProviders();
        if (options.LoggerFactory is { } loggerFactory)
        {
            builder.Services.AddSingleton(loggerFactory);
        }

        builder.WebHost.UseSockets(sockets => sockets.UnsafePreferInlineScheduling = true);
        ListenOptions? tcp = null;
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            // Raw bytes, not HTTP: Kestrel accepts the connections and hands their pipes to the lane.
            kestrel.ListenUnixSocket(lanes.SocketPath, listen => listen.Run(lanes.ServeAsync));

            // Programs on other hosts: the same lane over TCP, in clear text as the link is.
            if (overTcp)
            {
                kestrel.Listen(IPAddress.Parse(options.Address), options.BulkLanePort, listen =>
                {
                    tcp = listen;
                    listen.Run(lanes.ServeAsync);
                });
            }
            kestrel.AddServerHeader = false;
        });
        builder.Services.AddSingleton<IHostLifetime, NoHostLifetime>();
        builder.Services.AddSingleton<IMemoryPoolFactory<byte>, LargeBlockMemoryPoolFactory>();

        WebApplication app = builder.Build();
        try
        {
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await app.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        // Kestrel writes the port it bound (port 0: a free one) back into the endpoint's options.
        return new LaneServer(app, tcp?.IPEndPoint!.Port ?? 0);
    }

    public async ValueTask DisposeAsync()
    {
        // Each connection aborts itself when asked to close (it would wait for payloads): no wait here.
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
