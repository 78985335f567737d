using System;
using System.Collections.Generic;

namespace CspNet.Remote.Internal;

/// <summary>
/// A worker program's store of shipped assemblies and the collectible load contexts made from
/// them: one context per distinct set of assemblies (by hash), unloaded when idle.
/// </summary>
/// <remarks>Thread-safe.</remarks>
internal sealed class ShippedCodeCache : IDisposable
{
    /// <summary>Creates an empty cache whose load contexts unload after <paramref name="idleUnload"/> unused.</summary>
    internal ShippedCodeCache(TimeSpan idleUnload) => throw new NotImplementedException("Being written on main (session 4).");

    /// <summary>The assemblies of <paramref name="assemblies"/> whose images this cache does not hold yet.</summary>
    internal IReadOnlyList<ShippedAssembly> Missing(IReadOnlyList<ShippedAssembly> assemblies) => throw new NotImplementedException();

    /// <summary>Stores <paramref name="image"/> as <paramref name="assembly"/>.</summary>
    /// <exception cref="ShippingRefusedException">The image's SHA-256 is not <paramref name="assembly"/>'s (tampered or corrupt).</exception>
    internal void Add(ShippedAssembly assembly, ReadOnlyMemory<byte> image) => throw new NotImplementedException();

    /// <summary>Loads the job's assemblies (or reuses their context), checks every type against the allow-list and deserializes the process.</summary>
    /// <exception cref="ShippingRefusedException">An assembly is missing, a type is not allowed, or the state is malformed.</exception>
    internal ProcessLease Instantiate(ShippedProcess job) => throw new NotImplementedException();

    /// <inheritdoc/>
    public void Dispose() => throw new NotImplementedException();
}

/// <summary>A deserialized process and its use of a load context; dispose it when the process has run.</summary>
internal sealed class ProcessLease : IDisposable
{
    private readonly Action? _release;

    internal ProcessLease(ICSPProcess process, Action? release)
    {
        Process = process;
        _release = release;
    }

    /// <summary>The process, ready to run.</summary>
    internal ICSPProcess Process { get; }

    /// <inheritdoc/>
    public void Dispose() => _release?.Invoke();
}

/// <summary>Why a worker refuses a job: the gRPC status a pool answers with follows from <see cref="Reason"/>.</summary>
internal sealed class ShippingRefusedException(ShippingRefusal reason, string message) : Exception(message)
{
    /// <summary>What was wrong.</summary>
    internal ShippingRefusal Reason { get; } = reason;
}

/// <summary>The reasons a worker refuses a job.</summary>
internal enum ShippingRefusal
{
    /// <summary>An assembly image did not have the SHA-256 it was announced with (answer DATA_LOSS / PERMISSION_DENIED).</summary>
    HashMismatch,

    /// <summary>The job needs an assembly the worker has not been sent (answer FAILED_PRECONDITION).</summary>
    AssemblyMissing,

    /// <summary>The process type or a type in its state is outside the allow-list (answer PERMISSION_DENIED).</summary>
    TypeNotAllowed,

    /// <summary>The state does not decode as the process type (answer INVALID_ARGUMENT).</summary>
    MalformedState,
}
