using System.Collections.Concurrent;
using System.Security.Cryptography;
using System.Text;
using CspNet.Remote.Internal.Workers;

namespace CspNet.Remote.Tests.Workers;

/// <summary>
/// Shipping without serialization, for tests of the pool's protocol, scheduling and failures: a
/// process travels as a ticket naming the very instance, and its "assembly" is a small image whose
/// SHA-256 the pool's store checks as the real cache does. Pools and clients share the tickets
/// because they share this test process.
/// </summary>
internal sealed class FakeShipping : IProcessShipper
{
    private static readonly ConcurrentDictionary<string, object> Tickets = new();
    private static readonly byte[] Image = Encoding.UTF8.GetBytes("fake assembly image");
    internal static readonly string ImageHash = Convert.ToHexStringLower(SHA256.HashData(Image));

    /// <summary>Whether images are corrupted on the way (the pool must refuse them).</summary>
    internal bool Tamper { get; init; }

    /// <summary>How many images were sent.</summary>
    internal int ImagesSent => _imagesSent;

    private int _imagesSent;

    public ShippedProcess Pack(object process)
    {
        string ticket = Guid.NewGuid().ToString("N");
        Tickets[ticket] = process;
        return new ShippedProcess(process.GetType().FullName!, "Fake", Encoding.UTF8.GetBytes(ticket), [new ShippedAssembly("Fake", ImageHash)]);
    }

    public byte[] ReadImage(ShippedAssembly assembly)
    {
        Interlocked.Increment(ref _imagesSent);
        byte[] copy = (byte[])Image.Clone();
        if (Tamper)
        {
            copy[0] ^= 0xFF;
        }

        return copy;
    }

    /// <summary>A pool's store: holds the images it was sent and hands out the ticketed instances.</summary>
    internal sealed class Store : IShippedCode
    {
        private readonly ConcurrentDictionary<string, bool> _images = new();

        /// <summary>When set, Instantiate waits for it: a job is then held before it starts.</summary>
        internal TaskCompletionSource? HoldBeforeStart { get; set; }

        /// <summary>Completed when a job reaches Instantiate.</summary>
        internal TaskCompletionSource Instantiating { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public IReadOnlyList<ShippedAssembly> Pin(IReadOnlyList<ShippedAssembly> assemblies) =>
            [.. assemblies.Where(a => !_images.ContainsKey(a.Sha256))];

        public void Unpin(IReadOnlyList<ShippedAssembly> assemblies)
        {
        }

        public void Add(ShippedAssembly assembly, ReadOnlyMemory<byte> image)
        {
            string hash = Convert.ToHexStringLower(SHA256.HashData(image.Span));
            if (hash != assembly.Sha256)
            {
                throw new ShippingRefusedException(ShippingRefusal.HashMismatch, $"The image of {assembly.Name} has SHA-256 {hash}, not {assembly.Sha256}.");
            }

            _images[hash] = true;
        }

        public ProcessLease Instantiate(ShippedProcess job)
        {
            Instantiating.TrySetResult();
            HoldBeforeStart?.Task.GetAwaiter().GetResult();
            return Tickets.TryRemove(Encoding.UTF8.GetString(job.State), out object? process)
                ? new ProcessLease(AsyncProcessRunner.AsThreadProcess(process), null)
                : throw new ShippingRefusedException(ShippingRefusal.MalformedState, "Unknown ticket.");
        }

        public void Dispose()
        {
        }
    }
}
