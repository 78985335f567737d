using System;
using CspNet.Remote;
using CspNet.Remote.Hosting;
using CspNet.Remote.Internal.Hosting;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers a CspNet node run by the Generic Host: the distributed twin of <c>AddCspNet</c>.</summary>
public static class CspNodeServiceCollectionExtensions
{
    /// <summary>
    /// Adds the core's services (<c>AddCspNet</c>), <see cref="CspNodeOptions"/> bound from the
    /// <c>CspNet:Node</c> configuration section and validated when the host starts, and a
    /// <see cref="CspNodeHost"/> as a hosted service that starts the node with the host and stops
    /// it with the host. Inject <see cref="CspNodeHost"/>, or <see cref="CspNode"/> once the host
    /// has started.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Adjusts the options after configuration binding; may be <see langword="null"/>.</param>
    /// <param name="isCspManagerNode">
    /// True (the default): the node is also <see cref="CspNet.CspManager.Node"/> while the host runs, so
    /// processes in the paper's style (<c>Factory.GetOne2OneIn&lt;T&gt;(name)</c>) use it; the host then
    /// fails to start if <c>CspManager.Init</c> was called. False: only those who inject it use it
    /// (several nodes in one process, as in tests).
    /// </param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    public static IServiceCollection AddCspNode(this IServiceCollection services, Action<CspNodeOptions>? configure = null, bool isCspManagerNode = true)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddCspNet();
        OptionsBuilder<CspNodeOptions> options = services.AddOptions<CspNodeOptions>().BindConfiguration(CspNodeOptions.SectionName);
        if (configure is not null)
        {
            options.Configure(configure);
        }

        // A wrong setting fails the host's start with the section's name, before anything listens.
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<CspNodeOptions>, CspNodeOptionsValidator>());
        options.ValidateOnStart();
        services.TryAddSingleton(provider => new CspNodeHost(
            provider.GetRequiredService<IOptions<CspNodeOptions>>(),
            provider.GetService<ILoggerFactory>(),
            isCspManagerNode));
        services.AddHostedService(static provider => provider.GetRequiredService<CspNodeHost>());
        services.TryAddSingleton(static provider => provider.GetRequiredService<CspNodeHost>().Node);
        return services;
    }
}
