namespace CspNet.Tests.Buffers;

/// <summary>The storage behind <see cref="FifoBuffer{T}"/> and <see cref="OverwriteOldestBuffer{T}"/>.</summary>
public class BoundedQueueTests
{
    [Fact]
    public void Constructor_LargeCapacity_AllocatesNoStorage()
    {
        var queue = new BoundedQueue<int>(int.MaxValue);

        Assert.Equal(0, queue.AllocatedLength);
        Assert.Equal(0, queue.Count);
        Assert.False(queue.IsFull);
    }

    [Fact]
    public void Enqueue_BeyondInitialLength_GrowsByDoublingUpToCapacity()
    {
        var queue = new BoundedQueue<int>(10);
        var lengths = new List<int>();
        while (!queue.IsFull)
        {
            queue.Enqueue(queue.Count);
            lengths.Add(queue.AllocatedLength);
        }

        Assert.Equal([4, 4, 4, 4, 8, 8, 8, 8, 10, 10], lengths);
        for (int i = 0; i < 10; i++)
        {
            Assert.Equal(i, queue.Dequeue());
        }
    }

    [Fact]
    public void Dequeue_LargeQueueEmptied_ReleasesStorage()
    {
        const int Count = 100_000;
        var queue = new BoundedQueue<int>(int.MaxValue);
        for (int i = 0; i < Count; i++)
        {
            queue.Enqueue(i);
        }

        Assert.True(queue.AllocatedLength >= Count);
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(i, queue.Dequeue());
        }

        Assert.Equal(0, queue.AllocatedLength);
        queue.Enqueue(7);
        Assert.Equal(7, queue.Dequeue());
    }

    [Fact]
    public void Dequeue_SmallQueueEmptied_KeepsStorageForReuse()
    {
        var queue = new BoundedQueue<int>(64);
        for (int round = 0; round < 3; round++)
        {
            for (int i = 0; i < 64; i++)
            {
                queue.Enqueue(i);
            }

            while (queue.Count > 0)
            {
                queue.Dequeue();
            }

            Assert.Equal(64, queue.AllocatedLength);
        }
    }

    [Fact]
    public void Dequeue_Empty_ThrowsInvalidOperationException()
    {
        var queue = new BoundedQueue<string>(3);

        Assert.Throws<InvalidOperationException>(() => queue.Dequeue());
    }
}
