using System;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CspNet.Internal.Hosting;

/// <summary>
/// Binds options from a section of the container's <see cref="IConfiguration"/> when there is one.
/// Unlike <c>BindConfiguration</c>, a container without configuration (a bare ServiceCollection)
/// is not an error: the options keep their defaults and whatever <c>configure</c> sets.
/// </summary>
internal sealed class ConfigureFromSection<TOptions>(IServiceProvider provider, string section) : IConfigureOptions<TOptions>
    where TOptions : class
{
    public void Configure(TOptions options)
    {
        if (provider.GetService<IConfiguration>() is { } configuration)
        {
            configuration.GetSection(section).Bind(options);
        }
    }
}
