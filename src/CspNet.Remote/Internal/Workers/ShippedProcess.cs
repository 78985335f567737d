using System.Collections.Generic;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// One assembly a shipped process needs, named by its SHA-256: <see cref="Path"/> is set only on the
/// sending side, where the image is read from disk when a worker asks for it.
/// </summary>
/// <param name="Name">The assembly's simple name (for loading and for messages).</param>
/// <param name="Sha256">The SHA-256 of the assembly's image, 64 lower-case hex digits.</param>
internal sealed record ShippedAssembly(string Name, string Sha256)
{
    /// <summary>Where the image is on the sender's disk; null on a worker.</summary>
    internal string? Path { get; init; }
}

/// <summary>A process ready to travel: its type, its serialized fields, and the assemblies that define it.</summary>
/// <param name="TypeName">The process type's full name (namespace and nested names, no assembly).</param>
/// <param name="AssemblyName">The simple name of the assembly that defines the type; one of <paramref name="Assemblies"/>.</param>
/// <param name="State">Every instance field of the process (see <see cref="ProcessPacker"/>), MessagePack-encoded.</param>
/// <param name="Assemblies">The process's assembly and every non-framework assembly it depends on, CspNet's own excepted.</param>
internal sealed record ShippedProcess(string TypeName, string AssemblyName, byte[] State, IReadOnlyList<ShippedAssembly> Assemblies);
