using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.Loader;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// A collectible load context holding one set of shipped assemblies. Host assemblies (the framework,
/// CspNet and its dependencies) come from the default context, so a shipped process is an
/// <see cref="ICSPProcess"/> and its named channels are the worker's own.
/// </summary>
/// <remarks>
/// Isolation: none against hostile code. A load context separates type identities and lets code be
/// unloaded; shipped code runs with the worker's full rights (see docs/SECURITY.md).
/// </remarks>
internal sealed class ShippedLoadContext : AssemblyLoadContext
{
    private readonly Dictionary<string, Assembly> _shipped = new(StringComparer.Ordinal);

    /// <summary>Loads every image of <paramref name="images"/> (name -> image) into a new collectible context.</summary>
    internal ShippedLoadContext(string name, IReadOnlyList<KeyValuePair<string, byte[]>> images)
        : base("cspnet-shipped-" + name, isCollectible: true)
    {
        foreach ((string assemblyName, byte[] image) in images)
        {
            using var stream = new MemoryStream(image, writable: false);
            _shipped[assemblyName] = LoadFromStream(stream);
        }
    }

    /// <summary>The shipped assembly named <paramref name="simpleName"/>, or null.</summary>
    internal Assembly? Shipped(string simpleName) => _shipped.GetValueOrDefault(simpleName);

    /// <summary>Whether <paramref name="assembly"/> is one of this context's shipped assemblies.</summary>
    internal bool IsShipped(Assembly assembly) =>
        assembly.GetName().Name is { } name && _shipped.TryGetValue(name, out Assembly? shipped) && shipped == assembly;

    /// <inheritdoc/>
    protected override Assembly? Load(AssemblyName assemblyName)
    {
        // Host assemblies and anything not shipped resolve in the default context (null).
        return assemblyName.Name is { } name && !HostAssemblies.Contains(name) ? _shipped.GetValueOrDefault(name) : null;
    }
}
