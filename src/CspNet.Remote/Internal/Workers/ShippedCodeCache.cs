using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Threading;
using CspNet.Remote.Workers;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// A worker program's store of shipped assemblies and the collectible load contexts made from
/// them: one context per distinct set of assemblies (by hash), unloaded when idle.
/// </summary>
/// <remarks>
/// <para>
/// Images are kept by SHA-256, so a job whose assemblies a worker has seen before costs no
/// transfer (only a new version of the code does). Their total size is capped: past the cap the
/// least recently used images are dropped (a later job needing one has it sent again). An image a
/// job still waits to load is pinned and never dropped; when pinned images alone would exceed the
/// cap, the new image is refused (<see cref="ShippingRefusal.StoreFull"/>). A context is created on the
/// first job of its set, shared by every job of the same set while they run, and unloaded once it
/// has had no running job for the idle time (a one-shot timer, restarted by each release).
/// </para>
/// <para>Thread-safe: one lock guards the images and contexts; loading happens outside it.</para>
/// </remarks>
internal sealed class ShippedCodeCache : IDisposable
{
    private readonly Lock _gate = new();
    private readonly TimeSpan _idleUnload;
    private readonly long _maxStoreBytes;

    // Images by SHA-256, each with its place in the recency list (most recently used first).
    private readonly Dictionary<string, (byte[] Image, LinkedListNode<string> Use)> _images = new(StringComparer.Ordinal);
    private readonly LinkedList<string> _recency = new();

    // How many accepted jobs still need each image (present or still to come): those are never dropped.
    private readonly Dictionary<string, int> _pins = new(StringComparer.Ordinal);
    private readonly Dictionary<string, Entry> _contexts = new(StringComparer.Ordinal);
    private long _storeBytes;
    private bool _disposed;

    /// <summary>Creates an empty cache whose load contexts unload after <paramref name="idleUnload"/> unused and whose images total at most <paramref name="maxStoreBytes"/>.</summary>
    internal ShippedCodeCache(TimeSpan idleUnload, long maxStoreBytes = WorkerPoolOptions.DefaultMaxImageStoreBytes)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(idleUnload, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxStoreBytes, 1);
        _idleUnload = idleUnload;
        _maxStoreBytes = maxStoreBytes;
    }

    /// <summary>The total size of the images held.</summary>
    internal long StoreBytes
    {
        get
        {
            lock (_gate)
            {
                return _storeBytes;
            }
        }
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

    /// <summary>
    /// Keeps the images of <paramref name="assemblies"/> (held now or sent later) until <see cref="Unpin"/>,
    /// marks the held ones as just used, and returns the ones this cache does not hold.
    /// </summary>
    internal IReadOnlyList<ShippedAssembly> Pin(IReadOnlyList<ShippedAssembly> assemblies)
    {
        var missing = new List<ShippedAssembly>();
        lock (_gate)
        {
            foreach (ShippedAssembly assembly in assemblies.Where(a => !HostAssemblies.Contains(a.Name)))
            {
                _pins[assembly.Sha256] = _pins.GetValueOrDefault(assembly.Sha256) + 1;
                if (_images.TryGetValue(assembly.Sha256, out var held))
                {
                    _recency.Remove(held.Use);
                    _recency.AddFirst(held.Use);
                }
                else
                {
                    missing.Add(assembly);
                }
            }
        }

        return missing;
    }

    /// <summary>Ends a <see cref="Pin"/> of the same assemblies: their images may be dropped again when the store is full.</summary>
    internal void Unpin(IReadOnlyList<ShippedAssembly> assemblies)
    {
        lock (_gate)
        {
            foreach (ShippedAssembly assembly in assemblies.Where(a => !HostAssemblies.Contains(a.Name)))
            {
                if (_pins.TryGetValue(assembly.Sha256, out int count))
                {
                    if (count <= 1)
                    {
                        _pins.Remove(assembly.Sha256);
                    }
                    else
                    {
                        _pins[assembly.Sha256] = count - 1;
                    }
                }
            }
        }
    }

    /// <summary>Stores <paramref name="image"/> as <paramref name="assembly"/>, dropping the least recently used unpinned images past the store's cap.</summary>
    /// <exception cref="ShippingRefusedException">The image's SHA-256 is not <paramref name="assembly"/>'s (tampered or corrupt), or pinned images leave no room for it.</exception>
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
            if (_images.ContainsKey(actual))
            {
                return;
            }

            MakeRoom(copy.Length);
            _images.Add(actual, (copy, _recency.AddFirst(actual)));
            _storeBytes += copy.Length;
        }
    }

    // Under the lock: drops unpinned images, least recently used first, until the new image fits.
    private void MakeRoom(long needed)
    {
        LinkedListNode<string>? candidate = _recency.Last;
        while (_storeBytes + needed > _maxStoreBytes && candidate is not null)
        {
            LinkedListNode<string>? previous = candidate.Previous;
            if (!_pins.ContainsKey(candidate.Value))
            {
                _storeBytes -= _images[candidate.Value].Image.Length;
                _images.Remove(candidate.Value);
                _recency.Remove(candidate);
            }

            candidate = previous;
        }

        if (_storeBytes + needed > _maxStoreBytes)
        {
            throw new ShippingRefusedException(ShippingRefusal.StoreFull,
                $"The pool's image store holds {_storeBytes} bytes of images that waiting jobs need and cannot take {needed} more (WorkerPoolOptions.MaxImageStoreBytes is {_maxStoreBytes}); try again when jobs have started, or raise the cap.");
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
            if (type is null || !(typeof(ICSPProcess).IsAssignableFrom(type) || typeof(IAsyncCSPProcess).IsAssignableFrom(type)) || type.IsAbstract || type.ContainsGenericParameters)
            {
                throw new ShippingRefusedException(ShippingRefusal.TypeNotAllowed,
                    $"'{job.TypeName}' is not a concrete ICSPProcess or IAsyncCSPProcess type of the shipped assembly {job.AssemblyName}.");
            }

            if (StateTypes.Check(type, entry.Context.IsShipped, type.Name) is { } problem)
            {
                throw new ShippingRefusedException(ShippingRefusal.TypeNotAllowed, problem);
            }

            ICSPProcess process = AsyncProcessRunner.AsThreadProcess(ProcessStateSerializer.Deserialize(type, job.State, entry.Context.IsShipped, entry.Context.Shipped));
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
            _recency.Clear();
            _storeBytes = 0;
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

            images = shipped.Select(a => KeyValuePair.Create(a.Name, _images[a.Sha256].Image)).ToArray();
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

    /// <summary>The process, ready to run (an async process wrapped in an <see cref="AsyncProcessRunner"/>).</summary>
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

    /// <summary>Images that waiting jobs need fill the store: the stream sending one more ends with RESOURCE_EXHAUSTED.</summary>
    StoreFull,

    /// <summary>The client cancelled the job before it started.</summary>
    Cancelled,
}
