using System;
using System.Linq;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Security;
using CspNet.Remote.Internal.Transport;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>
/// The gRPC endpoint of one program: Kestrel, HTTP/2 only (h2c: clients speak HTTP/2 without TLS
/// upgrade, which needs an HTTP/2-only endpoint; with the cluster's certificates, HTTP/2 over mutual
/// TLS), serving the Link service.
/// </summary>
internal sealed class NodeServer : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly BulkLaneHost? _lanes;

    private NodeServer(WebApplication app, int port, BulkLaneHost? lanes)
    {
        _app = app;
        Port = port;
        _lanes = lanes;
    }

    internal int Port { get; }

    internal static async Task<NodeServer> StartAsync(NodeRuntime runtime, CancellationToken cancellationToken)
    {
        CspNodeOptions options = runtime.Options;
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [], ApplicationName = "CspNet.Remote" });
        builder.Logging.ClearProviders();
        if (options.LoggerFactory is { } loggerFactory)
        {
            builder.Services.AddSingleton(loggerFactory);
        }

        TimeSpan half = NodeTransport.KeepAliveInterval(options.PeerTimeout);
        BulkLaneHost? lanes = BulkLaneHost.Create(options, runtime.Logger);
        ListenOptions? link = null;
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            IPAddress address = IPAddress.Parse(options.Address);
            kestrel.Listen(address, options.Port, listen =>
            {
                link = listen;
                listen.Protocols = HttpProtocols.Http2;
                UseLinkTls(listen, options);
            });
            kestrel.AddServerHeader = false;
            kestrel.Limits.MaxConcurrentConnections = options.MaxConnections;
            kestrel.Limits.MaxRequestBodySize = null; // a Link stream lives as long as the program
            kestrel.Limits.MinRequestBodyDataRate = null; // and may be idle for hours between values
            kestrel.Limits.Http2.KeepAlivePingDelay = half;
            kestrel.Limits.Http2.KeepAlivePingTimeout = half;
            kestrel.Limits.Http2.InitialConnectionWindowSize = NodeTransport.WindowSize;
            kestrel.Limits.Http2.InitialStreamWindowSize = NodeTransport.WindowSize;
        });
        // The endpoint is part of the user's program, not its host: it must not take over Ctrl+C
        // and SIGTERM (the default console lifetime would stop the server and swallow the signal).
        builder.Services.AddSingleton<IHostLifetime, NoHostLifetime>();
        builder.Services.AddSingleton<IMemoryPoolFactory<byte>, LargeBlockMemoryPoolFactory>();
        builder.Services.AddSingleton(runtime);
        builder.Services.AddSingleton<IHomeNode>(runtime);
        builder.Services.AddGrpc(grpc =>
        {
            grpc.MaxReceiveMessageSize = NodeTransport.MessageLimit(options);
            grpc.MaxSendMessageSize = NodeTransport.MessageLimit(options);
            grpc.EnableDetailedErrors = false;
            grpc.Interceptors.Add<NodeKeyInterceptor>();
        });

        WebApplication app = builder.Build();
        app.MapGrpcService<LinkService>();
        try
        {
            if (lanes is not null)
            {
                // The lanes on sockets of their own (TCP under TLS when this program has a
                // certificate): each payload straight into its value's array, without Kestrel's
                // connection pipes and their hand-offs (BulkLaneHost.Sockets.cs).
                lanes.ListenOnUnixSocket();
                lanes.TcpPort = lanes.ListenOnTcp(IPAddress.Parse(options.Address), options.BulkLanePort);
            }

            await app.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            if (lanes is not null)
            {
                await lanes.StopListeningAsync().ConfigureAwait(false);
                lanes.Dispose();
            }

            throw;
        }

        runtime.Lanes = lanes;
        return new NodeServer(app, link!.IPEndPoint!.Port, lanes);
    }

    /// <summary>TLS with this program's certificate when it has one; mutual TLS when it also has the cluster's authority.</summary>
    private static void UseLinkTls(ListenOptions listen, CspNodeOptions options)
    {
        if (options.Certificate is not { } certificate)
        {
            return;
        }

        listen.UseHttps(https =>
        {
            https.ServerCertificate = certificate;

            // Kestrel's own 10 s drops handshakes on a loaded machine, which the peer sees as a
            // lost program; a handshake may take as long as any answer from a peer may.
            https.HandshakeTimeout = NodeTransport.HandshakeTimeout(options.PeerTimeout);
            if (options.TrustedCertificate is { } authority)
            {
                // Mutual TLS: only programs with a certificate from the cluster's authority get in.
                https.ClientCertificateMode = ClientCertificateMode.RequireCertificate;
                https.ClientCertificateValidation = (presented, _, _) => Certificates.IsValidClient(presented, authority);
            }
        });
    }

    public async ValueTask DisposeAsync()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(2));
        try
        {
            await _app.StopAsync(timeout.Token).ConfigureAwait(false);
        }
        finally
        {
            await _app.DisposeAsync().ConfigureAwait(false);
            if (_lanes is not null)
            {
                await _lanes.StopListeningAsync().ConfigureAwait(false);
                _lanes.Dispose();
            }
        }
    }
}

/// <summary>A host lifetime that leaves the process's signals to the program that embeds the host.</summary>
internal sealed class NoHostLifetime : IHostLifetime
{
    public Task WaitForStartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
