using CspNet.Tests.Channels;

namespace CspNet.Tests.Buffers;

public class OverwriteOldestBufferTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(-5)]
    public void Constructor_CapacityBelowOne_ThrowsArgumentOutOfRangeWithHelpfulMessage(int capacity)
    {
        var exception = Assert.Throws<ArgumentOutOfRangeException>(() => new OverwriteOldestBuffer<int>(capacity));

        Assert.Equal("capacity", exception.ParamName);
        Assert.Equal(capacity, exception.ActualValue);
        Assert.Contains("at least 1", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Constructor_CapacityIntMaxValue_AllocatesNothingUpFrontAndStoresValues()
    {
        // Capacity is a bound, not an allocation: storage grows with use.
        long before = GC.GetAllocatedBytesForCurrentThread();
        var buffer = new OverwriteOldestBuffer<string>(int.MaxValue);
        Assert.InRange(GC.GetAllocatedBytesForCurrentThread() - before, 0, 1024);

        for (int i = 0; i < 1000; i++)
        {
            buffer.Put($"v{i}");
            Assert.False(buffer.IsFull);
        }

        Assert.Equal(int.MaxValue, buffer.Capacity);
        Assert.Equal(1000, buffer.Count);
        Assert.Equal(0, buffer.OverwrittenCount);
        for (int i = 0; i < 1000; i++)
        {
            Assert.Equal($"v{i}", buffer.Take());
        }

        Assert.Equal(0, buffer.Count);
    }

    [Fact]
    public void Put_BeyondCapacityAfterWrapAround_KeepsNewestInOrder()
    {
        var buffer = new OverwriteOldestBuffer<int>(5);
        buffer.Put(0);
        buffer.Put(1);
        buffer.Put(2);
        Assert.Equal(0, buffer.Take());
        Assert.Equal(1, buffer.Take());
        for (int i = 3; i <= 12; i++)
        {
            buffer.Put(i);
            Assert.False(buffer.IsFull);
        }

        // 2..12 were put after the takes; only the newest five remain.
        Assert.Equal(5, buffer.Count);
        Assert.Equal(6, buffer.OverwrittenCount);
        for (int i = 8; i <= 12; i++)
        {
            Assert.Equal(i, buffer.Take());
        }

        Assert.Equal(0, buffer.Count);
    }

    [Fact]
    public void Put_BeyondCapacity_KeepsNewestAndCountsOverwritten()
    {
        var buffer = new OverwriteOldestBuffer<int>(3);
        for (int i = 1; i <= 10; i++)
        {
            buffer.Put(i);
            Assert.False(buffer.IsFull);
        }

        Assert.Equal(3, buffer.Capacity);
        Assert.Equal(3, buffer.Count);
        Assert.Equal(7, buffer.OverwrittenCount);
        Assert.Equal(8, buffer.Take());
        Assert.Equal(9, buffer.Take());
        Assert.Equal(10, buffer.Take());
        Assert.Equal(0, buffer.Count);
    }

    [Fact]
    public void Put_WithinCapacity_OverwritesNothing()
    {
        var buffer = new OverwriteOldestBuffer<int>(2);
        buffer.Put(1);
        buffer.Put(2);
        Assert.Equal(1, buffer.Take());
        buffer.Put(3);

        Assert.Equal(0, buffer.OverwrittenCount);
        Assert.Equal(2, buffer.Take());
        Assert.Equal(3, buffer.Take());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Write_NoReader_NeverBlocksAndReaderGetsNewest(ChannelKind kind)
    {
        var buffer = new OverwriteOldestBuffer<int>(4);
        var channel = TestChannels.Create(kind, buffer);

        var writer = ThreadParty.Start(() =>
        {
            for (int i = 0; i < 1000; i++)
            {
                channel.Write(i);
            }
        });
        await writer.Completion;
        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(1000)));

        Assert.Equal(997, buffer.OverwrittenCount);
        Assert.Equal(997, await channel.ReadAsync());
        Assert.Equal(998, await channel.ReadAsync());
        Assert.Equal(999, await channel.ReadAsync());
        Assert.Equal(1000, await channel.ReadAsync());
        await TestChannels.AssertNothingToReadAsync(channel);
    }

    [Fact(Timeout = 20_000)]
    public async Task Read_ReaderWaiting_GetsValueDirectlyWithoutOverwrite()
    {
        var buffer = new OverwriteOldestBuffer<int>(1);
        var channel = new One2OneChannel<int>(buffer);

        ValueTask<int> read = channel.ReadAsync();
        Assert.False(read.IsCompleted);
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);
        await channel.WriteAsync(3);

        Assert.Equal(1, await read);
        Assert.Equal(1, buffer.OverwrittenCount);
        Assert.Equal(3, await channel.ReadAsync());
    }
}
