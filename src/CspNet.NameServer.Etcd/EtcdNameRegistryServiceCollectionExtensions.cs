using System;
using CspNet.NameServer;
using CspNet.NameServer.Etcd;
using CspNet.Remote.NameServer;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Puts the CspNet NameServer's table in etcd.</summary>
public static class EtcdNameRegistryServiceCollectionExtensions
{
    /// <summary>
    /// Makes an <see cref="EtcdNameRegistry"/> the NameServer's <see cref="INameRegistry"/>, in
    /// place of the in-memory one <c>AddCspNameServer</c> adds (call it before or after that),
    /// with <see cref="EtcdNameRegistryOptions"/> validated at start.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Adjusts the options after configuration binding; may be <see langword="null"/>.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    public static IServiceCollection AddCspEtcdNameRegistry(this IServiceCollection services, Action<EtcdNameRegistryOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        OptionsBuilder<EtcdNameRegistryOptions> options = services.AddOptions<EtcdNameRegistryOptions>();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        // Fail at start-up, not at the first call, when the endpoints or files are wrong.
        options.Validate(static o =>
        {
            o.Validate();
            return true;
        }).ValidateOnStart();
        services.TryAddSingleton(TimeProvider.System);
        services.RemoveAll<INameRegistry>();
        services.AddSingleton<INameRegistry>(static provider => new EtcdNameRegistry(
            provider.GetRequiredService<IOptions<EtcdNameRegistryOptions>>().Value,
            provider.GetService<IOptions<NameServerOptions>>()?.Value,
            provider.GetRequiredService<TimeProvider>(),
            provider.GetService<ILogger<EtcdNameRegistry>>()));
        return services;
    }
}
