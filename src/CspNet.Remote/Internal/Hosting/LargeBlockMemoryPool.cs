using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Threading;
using CspNet.Remote.Internal.Transport;
using Microsoft.AspNetCore.Connections;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>
/// Kestrel's memory pool for a program's Link endpoint: 64 KiB blocks instead of Kestrel's 4 KiB.
/// </summary>
/// <remarks>
/// <para>
/// Why: Kestrel's socket transport receives into one pool block per <c>recv</c>, so with 4 KiB
/// blocks a 1 MB value costs 256 system calls at the home, and on a virtual machine each is
/// dear. Measured on the 2-core development VM (raw gRPC stream, 1 MB value and a 1-byte answer):
/// 2.8-3.2 ms with Kestrel's pool, 1.65-2.1 ms with 64 KiB blocks. Larger blocks (256 KiB) did
/// not help further. Kestrel's sends are batched into the same blocks, so the home's answers and
/// remote reads' values also leave in fewer, larger writes.
/// </para>
/// <para>
/// Thread-safety: <see cref="Rent"/> and a block's <c>Dispose</c> may be called from any thread.
/// Blocks are pinned (the socket layer pins what it receives into) and come from the pinned object
/// heap, so they never fragment the ordinary heaps. At most <see cref="MaxRetainedBlocks"/> free
/// blocks are kept; the rest go to the garbage collector, so an idle program holds at most 16 MiB
/// here after a burst of large values.
/// </para>
/// </remarks>
internal sealed class LargeBlockMemoryPool : MemoryPool<byte>
{
    /// <summary>The size of every block.</summary>
    internal const int BlockSize = 64 << 10;

    /// <summary>Free blocks kept for reuse; a flow-control window's worth (16 MiB).</summary>
    internal const int MaxRetainedBlocks = NodeTransport.WindowSize / BlockSize;

    private readonly ConcurrentQueue<Block> _free = new();
    private int _freeCount;

    /// <inheritdoc/>
    public override int MaxBufferSize => BlockSize;

    /// <inheritdoc/>
    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(minBufferSize, BlockSize);
        if (_free.TryDequeue(out Block? block))
        {
            Interlocked.Decrement(ref _freeCount);
            block.Rented();
            return block;
        }

        return new Block(this);
    }

    /// <inheritdoc/>
    protected override void Dispose(bool disposing)
    {
        _free.Clear();
    }

    private void Return(Block block)
    {
        // The count may briefly overshoot under contention; it only bounds what is retained.
        if (Interlocked.Increment(ref _freeCount) <= MaxRetainedBlocks)
        {
            _free.Enqueue(block);
        }
        else
        {
            Interlocked.Decrement(ref _freeCount);
        }
    }

    /// <summary>One pinned block; disposing it gives it back to its pool (once per rental).</summary>
    private sealed class Block(LargeBlockMemoryPool pool) : IMemoryOwner<byte>
    {
        private readonly byte[] _array = GC.AllocateUninitializedArray<byte>(BlockSize, pinned: true);
        private int _returned;

        public Memory<byte> Memory => _array;

        internal void Rented() => Volatile.Write(ref _returned, 0);

        public void Dispose()
        {
            // A double Dispose must not put the block in the queue twice (two renters, one buffer).
            if (Interlocked.Exchange(ref _returned, 1) == 0)
            {
                pool.Return(this);
            }
        }
    }
}

/// <summary>Gives Kestrel <see cref="LargeBlockMemoryPool"/>s (through its dependency injection).</summary>
internal sealed class LargeBlockMemoryPoolFactory : IMemoryPoolFactory<byte>
{
    public MemoryPool<byte> Create(MemoryPoolOptions? options = null) => new LargeBlockMemoryPool();
}
