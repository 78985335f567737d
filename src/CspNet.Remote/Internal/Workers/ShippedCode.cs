using System;
using System.Collections.Generic;

namespace CspNet.Remote.Internal.Workers;

/// <summary>What a worker pool needs of its code store: the seam between the pool's protocol and <see cref="ShippedCodeCache"/>.</summary>
/// <remarks>
/// The pool's protocol, scheduling and failure handling are tested with a store that needs no
/// shipped assemblies; the pool itself always uses <see cref="CodeCacheStore"/>.
/// </remarks>
internal interface IShippedCode : IDisposable
{
    /// <summary>Keeps the assemblies' images (held or still to come) until <see cref="Unpin"/>; returns those the store lacks.</summary>
    IReadOnlyList<ShippedAssembly> Pin(IReadOnlyList<ShippedAssembly> assemblies);

    /// <summary>Ends a <see cref="Pin"/>: a job has been instantiated or will not be.</summary>
    void Unpin(IReadOnlyList<ShippedAssembly> assemblies);

    /// <summary>Stores an image; throws <see cref="ShippingRefusedException"/> when its SHA-256 is not the announced one or the store is full of pinned images.</summary>
    void Add(ShippedAssembly assembly, ReadOnlyMemory<byte> image);

    /// <summary>Deserializes the job's process; throws <see cref="ShippingRefusedException"/> when it must not run.</summary>
    ProcessLease Instantiate(ShippedProcess job);
}

/// <summary>The pool's real code store: <see cref="ShippedCodeCache"/>.</summary>
internal sealed class CodeCacheStore(TimeSpan idleUnload, long maxStoreBytes) : IShippedCode
{
    private readonly ShippedCodeCache _cache = new(idleUnload, maxStoreBytes);

    public IReadOnlyList<ShippedAssembly> Pin(IReadOnlyList<ShippedAssembly> assemblies) => _cache.Pin(assemblies);

    public void Unpin(IReadOnlyList<ShippedAssembly> assemblies) => _cache.Unpin(assemblies);

    public void Add(ShippedAssembly assembly, ReadOnlyMemory<byte> image) => _cache.Add(assembly, image);

    public ProcessLease Instantiate(ShippedProcess job) => _cache.Instantiate(job);

    public void Dispose() => _cache.Dispose();
}

/// <summary>How a client turns processes into jobs: the seam between <see cref="DistParallel"/> and <see cref="ProcessPacker"/>.</summary>
internal interface IProcessShipper
{
    /// <summary>Packs a process (an <see cref="ICSPProcess"/> or an <see cref="IAsyncCSPProcess"/>); throws <see cref="ArgumentException"/> when it cannot travel.</summary>
    ShippedProcess Pack(object process);

    /// <summary>Reads the image of an assembly a worker asked for.</summary>
    byte[] ReadImage(ShippedAssembly assembly);
}

/// <summary>The real shipper: <see cref="ProcessPacker"/>.</summary>
internal sealed class PackerShipper : IProcessShipper
{
    internal static readonly PackerShipper Instance = new();

    public ShippedProcess Pack(object process) => ProcessPacker.Pack(process);

    public byte[] ReadImage(ShippedAssembly assembly) => ProcessPacker.ReadImage(assembly);
}
