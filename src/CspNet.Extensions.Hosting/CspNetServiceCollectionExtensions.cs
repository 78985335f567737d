using System;
using CspNet;
using CspNet.Extensions.Hosting.Internal;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the CspNet core's services for programs on the Generic Host.</summary>
public static class CspNetServiceCollectionExtensions
{
    /// <summary>
    /// Adds <see cref="CspNetOptions"/>, bound from the <c>CspNet</c> section of the registered
    /// configuration (if any) and validated when the host starts, and a <see cref="CSPThreadPool"/>
    /// built from them: give it to the <see cref="Parallel"/>s the program runs
    /// (<c>new Parallel(processes) { ThreadPool = pool }</c>). The container owns the pool and
    /// disposes it when the host stops; <see cref="CSPThreadPool.Default"/> is left alone.
    /// </summary>
    /// <param name="services">The service collection.</param>
    /// <param name="configure">Adjusts the options after configuration binding; may be <see langword="null"/>.</param>
    /// <returns><paramref name="services"/>, for chaining.</returns>
    public static IServiceCollection AddCspNet(this IServiceCollection services, Action<CspNetOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        OptionsBuilder<CspNetOptions> options = services.AddOptions<CspNetOptions>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IConfigureOptions<CspNetOptions>, CspNetOptionsSetup>());
        if (configure is not null)
        {
            options.Configure(configure);
        }

        // A wrong setting fails the host's start with its key, not the first Parallel.Run.
        options.Validate(static o => o.MaxStackSize >= 0, $"{CspNetOptions.SectionName}:{nameof(CspNetOptions.MaxStackSize)} must be 0 (the runtime default) or a stack size in bytes.")
            .ValidateOnStart();
        services.TryAddSingleton(static provider => new CSPThreadPool(provider.GetRequiredService<IOptions<CspNetOptions>>().Value.MaxStackSize));
        return services;
    }
}
