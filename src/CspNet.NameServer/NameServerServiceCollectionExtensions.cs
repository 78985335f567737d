using System;
using CspNet.NameServer;
using CspNet.NameServer.Internal;
using CspNet.NameServer.Internal.StatusReporting;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the CspNet NameServer's services.</summary>
public static class NameServerServiceCollectionExtensions
{
    /// <summary>
    /// Adds gRPC and the NameServer: <see cref="NameServerOptions"/>, and an
    /// <see cref="InMemoryNameRegistry"/> as the <see cref="INameRegistry"/> unless one is
    /// registered already. Map the service with <c>MapCspNameServer</c>, and its status page
    /// (configured by <see cref="NameServerStatusPageOptions"/>) with <c>MapCspNameServerStatus</c>.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Adjusts the options after configuration binding; may be <see langword="null"/>.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    public static IServiceCollection AddCspNameServer(this IServiceCollection services, Action<NameServerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        // Only the NameServer service checks the cluster key: health checks stay open to probes.
        services.AddGrpc().AddServiceOptions<NameServerService>(grpc => grpc.Interceptors.Add<NameServerKeyInterceptor>());
        OptionsBuilder<NameServerOptions> options = services.AddOptions<NameServerOptions>();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        // Fail at start-up, not at the first call, when configuration is out of range.
        options.Validate(static o =>
        {
            o.Validate();
            return true;
        }).ValidateOnStart();
        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton<INameRegistry>(static provider => new InMemoryNameRegistry(
            provider.GetRequiredService<IOptions<NameServerOptions>>().Value,
            provider.GetRequiredService<TimeProvider>(),
            provider.GetService<ILogger<InMemoryNameRegistry>>())
        {
            Failures = provider.GetRequiredService<RecentFailures>(),
        });

        // The status page (MapCspNameServerStatus) and the failures it lists.
        services.TryAddSingleton(static provider => new RecentFailures(provider.GetRequiredService<TimeProvider>()));
        services.TryAddSingleton<StatusPage>();
        services.AddOptions<NameServerStatusPageOptions>().Validate(static o =>
        {
            o.Validate();
            return true;
        }).ValidateOnStart();
        return services;
    }
}
