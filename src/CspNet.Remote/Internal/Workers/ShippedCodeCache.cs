using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Threading;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// A worker program's store of shipped assemblies and the collectible load contexts made from
/// them: one context per distinct set of assemblies (by hash), unloaded when idle.
/// </summary>
/// <remarks>
/// <para>
/// Images are kept by SHA-256 for the cache's life, so a job whose assemblies a worker has seen
/// before costs no transfer (only a new version of the code does). A context is created on the
/// first job of its set, shared by every job of the same set while they run, and unloaded once it
/// has had no running job for the idle time (a one-shot timer, restarted by each release).
/// </para>
/// <para>Thread-safe: one lock guards the images and contexts; loading happens outside it.</para>
/// </remarks>
internal sealed class ShippedCodeCache : IDisposable
{
    private readonly Lock _gate = new();
    private readonly TimeSpan _idleUnload;
    private readonly Dictionary<string, byte[]> _images = new(StringComparer.Ordinal);
    private readonly Dictionary<string, Entry> _contexts = new(StringComparer.Ordinal);
    private bool _disposed;

    /// <summary>Creates an empty cache whose load contexts unload after <paramref name="idleUnload"/> unused.</summary>
    internal ShippedCodeCache(TimeSpan idleUnload)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(idleUnload, TimeSpan.Zero);
        _idleUnload = idleUnload;
    }

    /// <summary>Raised (on a timer thread) with a context's key after it was unloaded; for tests and logs.</summary>
    internal event Action<string>? Unloaded;

    /// <summary>How many load contexts are alive.</summary>
    internal int ContextCount
    {
        get
        {
            lock (_gate)
            {
                return _contexts.Count;
            }
        }
    }

    /// <summary>The assemblies of <paramref name="assemblies"/> whose images this cache does not hold yet (host assemblies are never needed).</summary>
    internal IReadOnlyList<ShippedAssembly> Missing(IReadOnlyList<ShippedAssembly> assemblies)
    {
        lock (_gate)
        {
            return assemblies.Where(a => !HostAssemblies.Contains(a.Name) && !_images.ContainsKey(a.Sha256)).ToArray();
        }
    }

    /// <summary>Stores <paramref name="image"/> as <paramref name="assembly"/>.</summary>
    /// <exception cref="ShippingRefusedException">The image's SHA-256 is not <paramref name="assembly"/>'s (tampered or corrupt).</exception>
    internal void Add(ShippedAssembly assembly, ReadOnlyMemory<byte> image)
    {
        string actual = ProcessPacker.Sha256Of(image.Span);
        if (!string.Equals(actual, assembly.Sha256, StringComparison.Ordinal))
        {
            throw new ShippingRefusedException(ShippingRefusal.HashMismatch,
                $"The image sent for {assembly.Name} has SHA-256 {actual}, not the announced {assembly.Sha256}: refused (tampered or corrupted in transit).");
        }

        byte[] copy = image.ToArray();
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            _images.TryAdd(actual, copy);
        }
    }

    /// <summary>Loads the job's assemblies (or reuses their context), checks every type against the allow-list and deserializes the process.</summary>
    /// <exception cref="ShippingRefusedException">An assembly is missing, a type is not allowed, or the state is malformed.</exception>
    internal ProcessLease Instantiate(ShippedProcess job)
    {
        ArgumentNullException.ThrowIfNull(job);
        if (!job.Assemblies.Any(a => a.Name == job.AssemblyName) || HostAssemblies.Contains(job.AssemblyName))
        {
            throw new ShippingRefusedException(ShippingRefusal.TypeNotAllowed,
                $"The job names the type '{job.TypeName}' in '{job.AssemblyName}', which is not an assembly shipped with the job; a worker runs only processes of shipped assemblies.");
        }

        Entry entry = Acquire(job);
        try
        {
            Assembly assembly = entry.Context.Shipped(job.AssemblyName)!;
            Type? type = assembly.GetType(job.TypeName, throwOnError: false);
            if (type is null || !typeof(ICSPProcess).IsAssignableFrom(type) || type.IsAbstract || type.ContainsGenericParameters)
            {
                throw new ShippingRefusedException(ShippingRefusal.TypeNotAllowed,
                    $"'{job.TypeName}' is not a concrete ICSPProcess type of the shipped assembly {job.AssemblyName}.");
            }

            if (StateTypes.Check(type, entry.Context.IsShipped, type.Name) is { } problem)
            {
                throw new ShippingRefusedException(ShippingRefusal.TypeNotAllowed, problem);
            }

            var process = (ICSPProcess)ProcessStateSerializer.Deserialize(type, job.State, entry.Context.IsShipped, entry.Context.Shipped);
            return new ProcessLease(process, () => Release(entry));
        }
        catch
        {
            Release(entry);
            throw;
        }
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        Entry[] entries;
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            entries = [.. _contexts.Values];
            _contexts.Clear();
            _images.Clear();
        }

        foreach (Entry entry in entries)
        {
            entry.Timer?.Dispose();
            entry.Context.Unload();
        }
    }

    private Entry Acquire(ShippedProcess job)
    {
        ShippedAssembly[] shipped = job.Assemblies.Where(a => !HostAssemblies.Contains(a.Name)).OrderBy(a => a.Sha256, StringComparer.Ordinal).ToArray();
        string key = string.Join(",", shipped.Select(a => a.Sha256));
        KeyValuePair<string, byte[]>[] images;
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (_contexts.TryGetValue(key, out Entry? existing))
            {
                existing.Users++;
                existing.Timer?.Dispose();
                existing.Timer = null;
                return existing;
            }

            if (shipped.FirstOrDefault(a => !_images.ContainsKey(a.Sha256)) is { } missing)
            {
                throw new ShippingRefusedException(ShippingRefusal.AssemblyMissing,
                    $"The job needs {missing.Name} (SHA-256 {missing.Sha256}), which was not sent to this worker.");
            }

            images = shipped.Select(a => KeyValuePair.Create(a.Name, _images[a.Sha256])).ToArray();
        }

        // Loading parses images: outside the lock. Two jobs racing to create the same context
        // both load; the loser's context is unloaded at once and it uses the winner's.
        ShippedLoadContext context;
        try
        {
            context = new ShippedLoadContext(key.Length > 16 ? key[..16] : key, images);
        }
        catch (BadImageFormatException e)
        {
            throw new ShippingRefusedException(ShippingRefusal.MalformedState, $"A shipped image is not a loadable assembly: {e.Message}");
        }

        lock (_gate)
        {
            if (!_disposed && !_contexts.ContainsKey(key))
            {
                var created = new Entry(key, context) { Users = 1 };
                _contexts.Add(key, created);
                return created;
            }

            if (_contexts.TryGetValue(key, out Entry? winner))
            {
                winner.Users++;
                winner.Timer?.Dispose();
                winner.Timer = null;
                context.Unload();
                return winner;
            }
        }

        context.Unload();
        throw new ObjectDisposedException(nameof(ShippedCodeCache));
    }

    private void Release(Entry entry)
    {
        lock (_gate)
        {
            if (--entry.Users > 0 || _disposed || !_contexts.ContainsKey(entry.Key))
            {
                return;
            }

            int generation = ++entry.Generation;
            entry.Timer = new Timer(_ => Expire(entry, generation), null, _idleUnload, Timeout.InfiniteTimeSpan);
        }
    }

    private void Expire(Entry entry, int generation)
    {
        lock (_gate)
        {
            // A job that took the context after this timer was armed changed the generation.
            if (entry.Users > 0 || entry.Generation != generation || !_contexts.Remove(entry.Key))
            {
                return;
            }

            entry.Timer?.Dispose();
            entry.Timer = null;
        }

        entry.Context.Unload();
        Unloaded?.Invoke(entry.Key);
    }

    /// <summary>One load context and its bookkeeping (guarded by the cache's lock).</summary>
    private sealed class Entry(string key, ShippedLoadContext context)
    {
        internal string Key { get; } = key;

        internal ShippedLoadContext Context { get; } = context;

        internal int Users { get; set; }

        internal int Generation { get; set; }

        internal Timer? Timer { get; set; }
    }
}

/// <summary>A deserialized process and its use of a load context; dispose it when the process has run.</summary>
internal sealed class ProcessLease : IDisposable
{
    private Action? _release;

    internal ProcessLease(ICSPProcess process, Action? release)
    {
        Process = process;
        _release = release;
    }

    /// <summary>The process, ready to run.</summary>
    internal ICSPProcess Process { get; }

    /// <inheritdoc/>
    public void Dispose() => Interlocked.Exchange(ref _release, null)?.Invoke();
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
