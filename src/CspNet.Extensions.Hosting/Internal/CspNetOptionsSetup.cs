using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace CspNet.Extensions.Hosting.Internal;

/// <summary>
/// Binds <see cref="CspNetOptions"/> from the <c>CspNet</c> section of the container's configuration
/// when there is one. Unlike <c>BindConfiguration</c>, a container without configuration (a bare
/// ServiceCollection) is not an error: the options keep their defaults and what <c>configure</c> sets.
/// </summary>
internal sealed class CspNetOptionsSetup(IConfiguration? configuration = null) : IConfigureOptions<CspNetOptions>
{
    public void Configure(CspNetOptions options) => configuration?.GetSection(CspNetOptions.SectionName).Bind(options);
}
