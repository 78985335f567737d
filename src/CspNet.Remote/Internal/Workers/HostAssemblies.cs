using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.IO;
using System.Reflection;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// The assemblies every CspNet program has of its own and never ships: the shared framework and
/// CspNet.Remote with its dependencies (CspNet, gRPC, protobuf, MessagePack). Everything else a
/// process needs travels with it.
/// </summary>
/// <remarks>
/// Why a fixed rule instead of "whatever the worker happens to have": the two sides must agree
/// without a round trip, and a shipped process's types must be the shipped ones even when a
/// worker hosted in the same process (tests) has the same assembly loaded. CspNet's own types
/// (ICSPProcess, channels) must come from the worker's copy, or a shipped process would not be an
/// <see cref="ICSPProcess"/> there.
/// </remarks>
internal static class HostAssemblies
{
    private static readonly string SharedFrameworkRoot = FindSharedFrameworkRoot();

    private static readonly FrozenSet<string> Names = CollectNames();

    /// <summary>Whether the assembly named <paramref name="simpleName"/> is one every program has.</summary>
    internal static bool Contains(string simpleName) => Names.Contains(simpleName);

    /// <summary>Whether <paramref name="assembly"/> is one every program has.</summary>
    internal static bool Contains(Assembly assembly) =>
        assembly.GetName().Name is { } name && (Names.Contains(name) || IsFramework(assembly));

    private static bool IsFramework(Assembly assembly) =>
        !assembly.IsDynamic && assembly.Location.Length > 0 &&
        assembly.Location.StartsWith(SharedFrameworkRoot, StringComparison.Ordinal);

    // .../dotnet/shared/Microsoft.NETCore.App/10.0.x/System.Private.CoreLib.dll -> .../dotnet/shared/
    private static string FindSharedFrameworkRoot()
    {
        string? version = Path.GetDirectoryName(typeof(object).Assembly.Location);
        string? root = version is null ? null : Path.GetDirectoryName(Path.GetDirectoryName(version));
        return root is null ? "\0" : root + Path.DirectorySeparatorChar;
    }

    private static FrozenSet<string> CollectNames()
    {
        var names = new HashSet<string>(StringComparer.Ordinal);
        if (AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES") is string tpa)
        {
            foreach (string path in tpa.Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
            {
                if (path.StartsWith(SharedFrameworkRoot, StringComparison.Ordinal))
                {
                    names.Add(Path.GetFileNameWithoutExtension(path));
                }
            }
        }

        // CspNet.Remote and what it references, transitively (CspNet, Grpc.*, Google.Protobuf, MessagePack...).
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var pending = new Stack<Assembly>();
        pending.Push(typeof(HostAssemblies).Assembly);
        while (pending.TryPop(out Assembly? assembly))
        {
            if (assembly.GetName().Name is not { } name || !seen.Add(name))
            {
                continue;
            }

            names.Add(name);
            if (IsFramework(assembly))
            {
                continue; // its references are framework too, and already listed
            }

            foreach (AssemblyName reference in assembly.GetReferencedAssemblies())
            {
                if (reference.Name is null || seen.Contains(reference.Name))
                {
                    continue;
                }

                try
                {
                    pending.Push(Assembly.Load(reference));
                }
                catch (IOException)
                {
                    // A reference the runtime never needed here (an optional dependency): not part of the host.
                }
            }
        }

        return names.ToFrozenSet(StringComparer.Ordinal);
    }
}
