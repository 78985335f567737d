using System;
using Microsoft.Extensions.Options;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>
/// Checks <see cref="CspNodeOptions"/> bound from configuration with the same rules as
/// <see cref="CspNode.StartAsync"/>, so that the host fails at start with the section's name and
/// what to change, not later in a getter.
/// </summary>
internal sealed class CspNodeOptionsValidator : IValidateOptions<CspNodeOptions>
{
    public ValidateOptionsResult Validate(string? name, CspNodeOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        try
        {
            options.Validated();
            return ValidateOptionsResult.Success;
        }
        catch (ArgumentException e)
        {
            return ValidateOptionsResult.Fail($"Configuration section '{CspNodeOptions.SectionName}': {e.Message}");
        }
    }
}
