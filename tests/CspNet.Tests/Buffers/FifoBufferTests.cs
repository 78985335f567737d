using CspNet.Tests.Channels;

namespace CspNet.Tests.Buffers;

public class FifoBufferTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    public void Constructor_CapacityBelowOne_ThrowsArgumentOutOfRangeWithHelpfulMessage(int capacity)
    {
        var exception = Assert.Throws<ArgumentOutOfRangeException>(() => new FifoBuffer<int>(capacity));

        Assert.Equal("capacity", exception.ParamName);
        Assert.Equal(capacity, exception.ActualValue);
        Assert.Contains("at least 1", exception.Message, StringComparison.Ordinal);
        Assert.Contains("without a buffer", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Constructor_CapacityOne_IsEmptyAndNotFull()
    {
        var buffer = new FifoBuffer<int>(1);

        Assert.Equal(1, buffer.Capacity);
        Assert.Equal(0, buffer.Count);
        Assert.False(buffer.IsFull);
    }

    [Fact]
    public void Constructor_CapacityIntMaxValue_AllocatesNothingUpFrontAndStoresValues()
    {
        // Capacity is a bound, not an allocation: storage grows with use.
        long before = GC.GetAllocatedBytesForCurrentThread();
        var buffer = new FifoBuffer<int>(int.MaxValue);
        Assert.InRange(GC.GetAllocatedBytesForCurrentThread() - before, 0, 1024);

        for (int i = 0; i < 1000; i++)
        {
            buffer.Put(i);
            Assert.False(buffer.IsFull);
        }

        Assert.Equal(int.MaxValue, buffer.Capacity);
        Assert.Equal(1000, buffer.Count);
        for (int i = 0; i < 1000; i++)
        {
            Assert.Equal(i, buffer.Take());
        }

        Assert.Equal(0, buffer.Count);
    }

    [Fact]
    public void PutTake_WrapAroundWhileGrowing_KeepsOrderAndIsFullExactlyAtCapacity()
    {
        var buffer = new FifoBuffer<int>(5);
        int next = 0;
        int expected = 0;
        for (int round = 0; round < 20; round++)
        {
            // Fill to capacity from wherever the previous round left the oldest value, then take
            // a varying number, so that the storage wraps around at every stage of its growth.
            while (!buffer.IsFull)
            {
                buffer.Put(next++);
            }

            Assert.Equal(5, buffer.Count);
            Assert.Throws<InvalidOperationException>(() => buffer.Put(-1));
            for (int taken = 0; taken <= round % 5; taken++)
            {
                Assert.Equal(expected++, buffer.Take());
                Assert.False(buffer.IsFull);
            }
        }

        while (buffer.Count > 0)
        {
            Assert.Equal(expected++, buffer.Take());
        }

        Assert.Equal(next, expected);
    }

    [Fact]
    public void PutTake_SeveralValues_TakesInPutOrder()
    {
        var buffer = new FifoBuffer<int>(3);

        buffer.Put(1);
        buffer.Put(2);
        Assert.Equal(1, buffer.Take());
        buffer.Put(3);
        buffer.Put(4);

        Assert.Equal(2, buffer.Take());
        Assert.Equal(3, buffer.Take());
        Assert.Equal(4, buffer.Take());
        Assert.Equal(0, buffer.Count);
    }

    [Fact]
    public void Put_UpToCapacity_IsFullExactlyAtCapacity()
    {
        var buffer = new FifoBuffer<int>(2);

        buffer.Put(1);
        Assert.False(buffer.IsFull);
        buffer.Put(2);
        Assert.True(buffer.IsFull);
        Assert.Equal(2, buffer.Count);

        buffer.Take();
        Assert.False(buffer.IsFull);
    }

    [Fact]
    public void Put_WhenFull_ThrowsInvalidOperationException()
    {
        var buffer = new FifoBuffer<int>(1);
        buffer.Put(1);

        var exception = Assert.Throws<InvalidOperationException>(() => buffer.Put(2));

        Assert.Contains("full", exception.Message, StringComparison.Ordinal);
        Assert.Equal(1, buffer.Take());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_BufferedChannel_CompletesAtOnceUntilFullThenWaits(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(3));

        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(1)));
        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(2)));
        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(3)));
        ValueTask fourth = channel.WriteAsync(4);
        Assert.False(fourth.IsCompleted);

        // Taking one value makes room: the waiting value moves into the buffer, behind the others.
        Assert.Equal(1, await channel.ReadAsync());
        Assert.True(fourth.IsCompletedSuccessfully);
        await fourth;

        Assert.Equal(2, await channel.ReadAsync());
        Assert.Equal(3, await channel.ReadAsync());
        Assert.Equal(4, await channel.ReadAsync());
        await TestChannels.AssertNothingToReadAsync(channel);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Write_ThreadWriterOnFullBuffer_BlocksUntilReaderTakes(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(2));
        var steps = new Steps();
        var writer = ThreadParty.Start(() =>
        {
            channel.Write(1);
            channel.Write(2);
            steps.Reach(1);
            channel.Write(3);
            steps.Reach(2);
        });

        steps.WaitFor(1);
        writer.WaitUntilBlockedOrEnded();
        Assert.Equal(1, steps.Value);
        Assert.False(writer.Completion.IsCompleted);

        Assert.Equal(1, await channel.ReadAsync());
        await writer.Completion;
        Assert.Equal(2, steps.Value);
        Assert.Equal(2, await channel.ReadAsync());
        Assert.Equal(3, await channel.ReadAsync());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Read_BufferedChannelThreadWriter_ReceivesAllInOrder(ChannelKind kind)
    {
        const int Count = 10_000;
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(7));
        var writer = ThreadParty.Start(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                channel.Write(i);
            }
        });

        var reader = ThreadParty.Start(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                int value = channel.Read();
                if (value != i)
                {
                    return $"expected {i}, got {value}";
                }
            }

            return "ok";
        });

        Assert.Equal("ok", await reader.Completion);
        await writer.Completion;
    }

    [Fact(Timeout = 20_000)]
    public async Task ReadAsync_BufferedAndWritersWaiting_ServesBufferThenWritersInOrder()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);
        ValueTask third = channel.WriteAsync(3);
        ValueTask fourth = channel.WriteAsync(4);
        Assert.False(third.IsCompleted);
        Assert.False(fourth.IsCompleted);

        Assert.Equal(1, await channel.ReadAsync());
        Assert.True(third.IsCompletedSuccessfully);
        Assert.False(fourth.IsCompleted);
        Assert.Equal(2, await channel.ReadAsync());
        Assert.True(fourth.IsCompletedSuccessfully);
        Assert.Equal(3, await channel.ReadAsync());
        Assert.Equal(4, await channel.ReadAsync());
        await third;
        await fourth;
    }
}
