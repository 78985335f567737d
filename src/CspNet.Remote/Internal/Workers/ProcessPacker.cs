using System;

namespace CspNet.Remote.Internal;

/// <summary>Turns a process into a <see cref="ShippedProcess"/> on the sending side.</summary>
internal static class ProcessPacker
{
    /// <summary>Serializes <paramref name="process"/>'s fields and lists the assemblies it needs.</summary>
    /// <exception cref="ArgumentException">A field holds something that cannot travel (a channel end, a delegate, a type outside the allow-list); the message names the field and says what to do.</exception>
    internal static ShippedProcess Pack(ICSPProcess process) => throw new NotImplementedException("Being written on main (session 4).");

    /// <summary>Reads the image of <paramref name="assembly"/> (sending side) and checks it still has its SHA-256.</summary>
    internal static byte[] ReadImage(ShippedAssembly assembly) => throw new NotImplementedException("Being written on main (session 4).");
}
