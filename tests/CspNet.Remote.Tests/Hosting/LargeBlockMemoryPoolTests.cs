using System.Buffers;
using CspNet.Remote.Internal.Hosting;

namespace CspNet.Remote.Tests.Hosting;

/// <summary>The Link endpoint's Kestrel memory pool: block size, reuse, and the bound on what it keeps.</summary>
public sealed class LargeBlockMemoryPoolTests
{
    [Fact]
    public void Rent_AnySizeUpToTheBlock_ReturnsAWholeBlock()
    {
        using var pool = new LargeBlockMemoryPool();
        using IMemoryOwner<byte> small = pool.Rent(1);
        using IMemoryOwner<byte> whole = pool.Rent(LargeBlockMemoryPool.BlockSize);
        using IMemoryOwner<byte> unspecified = pool.Rent();

        Assert.Equal(LargeBlockMemoryPool.BlockSize, small.Memory.Length);
        Assert.Equal(LargeBlockMemoryPool.BlockSize, whole.Memory.Length);
        Assert.Equal(LargeBlockMemoryPool.BlockSize, unspecified.Memory.Length);
        Assert.Equal(LargeBlockMemoryPool.BlockSize, pool.MaxBufferSize);
    }

    [Fact]
    public void Rent_MoreThanABlock_Throws()
    {
        using var pool = new LargeBlockMemoryPool();

        Assert.Throws<ArgumentOutOfRangeException>(() => pool.Rent(LargeBlockMemoryPool.BlockSize + 1));
    }

    [Fact]
    public void Dispose_ReturnedBlock_IsRentedAgain()
    {
        using var pool = new LargeBlockMemoryPool();
        IMemoryOwner<byte> first = pool.Rent();
        first.Memory.Span[0] = 42;
        first.Dispose();

        using IMemoryOwner<byte> second = pool.Rent();

        Assert.Same(first, second);
    }

    [Fact]
    public void Dispose_Twice_BlockIsHandedOutOnlyOnce()
    {
        using var pool = new LargeBlockMemoryPool();
        IMemoryOwner<byte> block = pool.Rent();
        block.Dispose();
        block.Dispose();

        using IMemoryOwner<byte> a = pool.Rent();
        using IMemoryOwner<byte> b = pool.Rent();

        Assert.NotSame(a, b);
    }

    [Fact]
    public void Dispose_MoreBlocksThanRetained_KeepsOnlyTheBound()
    {
        using var pool = new LargeBlockMemoryPool();
        var blocks = new List<IMemoryOwner<byte>>();
        for (int i = 0; i < LargeBlockMemoryPool.MaxRetainedBlocks + 10; i++)
        {
            blocks.Add(pool.Rent());
        }

        foreach (IMemoryOwner<byte> block in blocks)
        {
            block.Dispose();
        }

        var reused = new HashSet<IMemoryOwner<byte>>(ReferenceEqualityComparer.Instance);
        var again = new List<IMemoryOwner<byte>>();
        for (int i = 0; i < LargeBlockMemoryPool.MaxRetainedBlocks + 10; i++)
        {
            IMemoryOwner<byte> block = pool.Rent();
            again.Add(block);
            if (blocks.Contains(block))
            {
                reused.Add(block);
            }
        }

        Assert.Equal(LargeBlockMemoryPool.MaxRetainedBlocks, reused.Count);
        foreach (IMemoryOwner<byte> block in again)
        {
            block.Dispose();
        }
    }
}
