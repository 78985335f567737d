using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.Loader;
using System.Security.Cryptography;

namespace CspNet.Remote.Internal.Workers;

/// <summary>Turns a process into a <see cref="ShippedProcess"/> on the sending side.</summary>
/// <remarks>Thread-safe. Assembly hashes are computed once per file and cached for the program's life.</remarks>
internal static class ProcessPacker
{
    private static readonly ConcurrentDictionary<string, string> HashByPath = new(StringComparer.Ordinal);

    /// <summary>Serializes <paramref name="process"/>'s fields and lists the assemblies it needs.</summary>
    /// <exception cref="ArgumentException">A field holds something that cannot travel (a channel end, a delegate, a type outside the allow-list); the message names the field and says what to do.</exception>
    /// <exception cref="NotSupportedException">The process's type cannot be shipped (generic, dynamic, or from an assembly without a file).</exception>
    internal static ShippedProcess Pack(object process)
    {
        ArgumentNullException.ThrowIfNull(process);
        Type type = process.GetType();
        if (process is not (ICSPProcess or IAsyncCSPProcess))
        {
            throw new ArgumentException($"{type} is neither an ICSPProcess nor an IAsyncCSPProcess: only processes are shipped.", nameof(process));
        }

        if (type.ContainsGenericParameters || type.IsGenericType)
        {
            throw new NotSupportedException($"The process type {type} is generic; a shipped process must have a non-generic type (derive a non-generic class from it).");
        }

        if (HostAssemblies.Contains(type.Assembly))
        {
            throw new NotSupportedException($"The process type {type} comes from {type.Assembly.GetName().Name}, which every program has; only processes of your own assemblies are shipped.");
        }

        IReadOnlyList<ShippedAssembly> assemblies = Closure(type.Assembly);
        var shipped = new HashSet<string>(StringComparer.Ordinal);
        foreach (ShippedAssembly assembly in assemblies)
        {
            shipped.Add(assembly.Name);
        }

        bool IsShipped(Assembly assembly) => assembly.GetName().Name is { } name && shipped.Contains(name);

        if (StateTypes.Check(type, IsShipped, type.Name) is { } problem)
        {
            throw new ArgumentException(problem, nameof(process));
        }

        byte[] state = ProcessStateSerializer.Serialize(process, IsShipped);
        return new ShippedProcess(type.FullName!, type.Assembly.GetName().Name!, state, assemblies);
    }

    /// <summary>Reads the image of <paramref name="assembly"/> (sending side) and checks it still has its SHA-256.</summary>
    /// <exception cref="InvalidOperationException">The file changed since the process was packed.</exception>
    internal static byte[] ReadImage(ShippedAssembly assembly)
    {
        string path = assembly.Path ?? throw new InvalidOperationException($"{assembly.Name} has no file on this side.");
        byte[] image = File.ReadAllBytes(path);
        return Sha256Of(image) == assembly.Sha256
            ? image
            : throw new InvalidOperationException($"{path} changed after its process was packed (its SHA-256 is no longer {assembly.Sha256}); run the program again.");
    }

    /// <summary>The SHA-256 of <paramref name="image"/> as 64 lower-case hex digits.</summary>
    internal static string Sha256Of(ReadOnlySpan<byte> image) => Convert.ToHexStringLower(SHA256.HashData(image));

    // The process's assembly and every assembly it references, transitively, that is not one
    // every program has. References that cannot be loaded here are skipped: this program runs
    // without them, so the process's code does not need them either.
    private static List<ShippedAssembly> Closure(Assembly root)
    {
        AssemblyLoadContext context = AssemblyLoadContext.GetLoadContext(root) ?? AssemblyLoadContext.Default;
        var result = new List<ShippedAssembly>();
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var pending = new Stack<Assembly>();
        pending.Push(root);
        while (pending.TryPop(out Assembly? assembly))
        {
            string name = assembly.GetName().Name!;
            if (!seen.Add(name) || HostAssemblies.Contains(assembly))
            {
                continue;
            }

            if (assembly.IsDynamic || assembly.Location.Length == 0)
            {
                throw new NotSupportedException($"The assembly {name} has no file (dynamic, or inside a single-file bundle), so it cannot be shipped; publish the program without single-file bundling.");
            }

            string path = assembly.Location;
            result.Add(new ShippedAssembly(name, HashByPath.GetOrAdd(path, static p => Sha256Of(File.ReadAllBytes(p)))) { Path = path });
            foreach (AssemblyName reference in assembly.GetReferencedAssemblies())
            {
                if (reference.Name is null || seen.Contains(reference.Name) || HostAssemblies.Contains(reference.Name))
                {
                    continue;
                }

                try
                {
                    pending.Push(context.LoadFromAssemblyName(reference));
                }
                catch (IOException)
                {
                }
            }
        }

        return result;
    }
}
