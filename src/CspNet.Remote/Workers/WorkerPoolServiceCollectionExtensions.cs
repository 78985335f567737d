using System;
using System.Net;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.Workers;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers a CspNet worker pool's services (see <see cref="WorkerPoolHost"/> for an in-process pool).</summary>
public static class WorkerPoolServiceCollectionExtensions
{
    /// <summary>
    /// Adds gRPC and a worker pool with <paramref name="options"/>: it joins the NameServer and
    /// registers once the server listens, and leaves when the host stops. Map the service with
    /// <c>MapCspWorkerPool</c>; configure Kestrel with <see cref="ListenForWorkerPool"/>.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="options">The pool's settings; validated here.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    /// <exception cref="ArgumentException">The options are wrong (the message says what to change).</exception>
    public static IServiceCollection AddCspWorkerPool(this IServiceCollection services, WorkerPoolOptions options)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return services.AddCspWorkerPool(options, new CodeCacheStore(options.IdleUnload, options.MaxImageStoreBytes));
    }

    internal static IServiceCollection AddCspWorkerPool(this IServiceCollection services, WorkerPoolOptions options, IShippedCode code)
    {
        // Only the WorkerPool service checks the token: health checks stay open to probes.
        services.AddGrpc(grpc =>
        {
            grpc.MaxReceiveMessageSize = WorkerProtocol.ChunkSize + (64 << 10);
            grpc.EnableDetailedErrors = false;
        }).AddServiceOptions<WorkerPoolGrpcService>(grpc => grpc.Interceptors.Add<PoolTokenInterceptor>());
        services.TryAddSingleton(options);
        services.TryAddSingleton(code);
        services.TryAddSingleton<PoolRuntime>();
        services.AddHostedService(static provider => provider.GetRequiredService<PoolRuntime>());
        return services;
    }

    /// <summary>
    /// Makes Kestrel listen where <paramref name="options"/> say, with HTTP/2 only, keep-alive
    /// pings within <see cref="WorkerPoolOptions.PeerTimeout"/>, and TLS (and client certificates)
    /// when configured.
    /// </summary>
    /// <param name="kestrel">Kestrel's options.</param>
    /// <param name="options">The pool's settings.</param>
    public static void ListenForWorkerPool(this KestrelServerOptions kestrel, WorkerPoolOptions options)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        ArgumentNullException.ThrowIfNull(options);
        TimeSpan half = NodeTransport.KeepAliveInterval(options.PeerTimeout);
        kestrel.AddServerHeader = false;
        kestrel.Limits.MaxConcurrentConnections = options.MaxConnections;
        kestrel.Limits.MinRequestBodyDataRate = null; // a Run stream may be silent while its jobs run
        kestrel.Limits.MaxRequestBodySize = null;
        kestrel.Limits.Http2.KeepAlivePingDelay = half;
        kestrel.Limits.Http2.KeepAlivePingTimeout = half;
        kestrel.Listen(IPAddress.Parse(options.Address), options.Port, listen =>
        {
            listen.Protocols = HttpProtocols.Http2;
            if (options.Certificate is { } certificate)
            {
                listen.UseHttps(https =>
                {
                    https.ServerCertificate = certificate;
                    https.HandshakeTimeout = NodeTransport.HandshakeTimeout(options.PeerTimeout);
                    if (options.ClientCertificateAuthority is not null)
                    {
                        // Asked for, checked by PoolTokenInterceptor: a caller without a good certificate
                        // then gets UNAUTHENTICATED and a log line, not a handshake failure it cannot read.
                        https.ClientCertificateMode = ClientCertificateMode.AllowCertificate;
                        https.AllowAnyClientCertificate();
                    }
                });
            }
        });
    }
}

/// <summary>Maps the CspNet worker pool's gRPC service.</summary>
public static class WorkerPoolEndpointRouteBuilderExtensions
{
    /// <summary>Maps the WorkerPool protocol (package <c>cspnet.workerpool.v1</c>).</summary>
    /// <param name="endpoints">The endpoint route builder.</param>
    /// <returns>The service's endpoint convention builder.</returns>
    /// <exception cref="InvalidOperationException"><c>AddCspWorkerPool</c> was not called.</exception>
    public static Microsoft.AspNetCore.Builder.GrpcServiceEndpointConventionBuilder MapCspWorkerPool(this Microsoft.AspNetCore.Routing.IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        if (endpoints.ServiceProvider.GetService(typeof(PoolRuntime)) is null)
        {
            throw new InvalidOperationException("The worker pool's services are missing: call services.AddCspWorkerPool(options) when configuring services.");
        }

        return Microsoft.AspNetCore.Builder.GrpcEndpointRouteBuilderExtensions.MapGrpcService<WorkerPoolGrpcService>(endpoints);
    }
}
