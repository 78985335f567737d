using CspNet.Tests.Channels;

namespace CspNet.Tests.Buffers;

public class InfiniteBufferTests
{
    [Fact]
    public void IsFull_AfterManyPuts_StaysFalse()
    {
        var buffer = new InfiniteBuffer<int>();
        for (int i = 0; i < 100_000; i++)
        {
            buffer.Put(i);
            Assert.False(buffer.IsFull);
        }

        Assert.Equal(100_000, buffer.Count);
    }

    [Fact]
    public void PutTake_SeveralValues_TakesInPutOrder()
    {
        var buffer = new InfiniteBuffer<string>();
        buffer.Put("a");
        buffer.Put("b");
        buffer.Put("c");

        Assert.Equal("a", buffer.Take());
        Assert.Equal("b", buffer.Take());
        Assert.Equal("c", buffer.Take());
        Assert.Equal(0, buffer.Count);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Write_NoReader_NeverBlocks(ChannelKind kind)
    {
        const int Count = 100_000;
        var channel = TestChannels.Create(kind, new InfiniteBuffer<int>());

        // On a thread of its own, so that a write that blocked would show as a timeout, not a hang.
        var writer = ThreadParty.Start(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                channel.Write(i);
            }
        });
        await writer.Completion;

        for (int i = 0; i < Count; i++)
        {
            ValueTask write = channel.WriteAsync(Count + i);
            Assert.True(write.IsCompletedSuccessfully);
        }

        for (int i = 0; i < 2 * Count; i++)
        {
            Assert.Equal(i, await channel.ReadAsync());
        }
    }
}
