namespace CspNet.Tests.Channels;

/// <summary>
/// An unbuffered channel is a rendezvous: a write completes only when a reader has taken the
/// value, and a read only when a writer has offered one.
/// </summary>
public class RendezvousTests
{
    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Write_UnbufferedThreadWriterNoReader_DoesNotReturnBeforeRead(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        var steps = new Steps();
        var writer = ThreadParty.Start(() =>
        {
            steps.Reach(1);
            channel.Write(42);
            steps.Reach(2);
        });

        // Past step 1 the writer's only blocking call is Write: once it is blocked (or has ended,
        // which a wrong implementation would), check that Write has not returned.
        steps.WaitFor(1);
        writer.WaitUntilBlockedOrEnded();
        Assert.Equal(1, steps.Value);
        Assert.False(writer.Completion.IsCompleted);

        Assert.Equal(42, await channel.ReadAsync());
        await writer.Completion;
        Assert.Equal(2, steps.Value);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Write_UnbufferedThreadWriterThreadReader_ReturnsOnlyAfterRead(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        var steps = new Steps();
        var writer = ThreadParty.Start(() =>
        {
            steps.Reach(1);
            channel.Write(42);
            steps.Reach(2);
        });

        steps.WaitFor(1);
        writer.WaitUntilBlockedOrEnded();
        Assert.Equal(1, steps.Value);

        var reader = ThreadParty.Start(channel.Read);
        Assert.Equal(42, await reader.Completion);
        await writer.Completion;
        Assert.Equal(2, steps.Value);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_UnbufferedNoReader_DoesNotCompleteBeforeRead(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);

        ValueTask write = channel.WriteAsync(42);
        Assert.False(write.IsCompleted);

        Assert.Equal(42, await channel.ReadAsync());
        await write;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_UnbufferedThreadReader_CompletesOnlyAfterRead(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);

        Task write = channel.WriteAsync(42).AsTask();
        Assert.False(write.IsCompleted);

        var reader = ThreadParty.Start(channel.Read);
        Assert.Equal(42, await reader.Completion);
        await write;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_UnbufferedWhileAnotherRendezvousCompletes_StaysPending(ChannelKind kind)
    {
        // A pending write is not completed by unrelated traffic: another channel's rendezvous
        // between the same processes completes, the write stays pending until its own read.
        var channel = TestChannels.Create<int>(kind);
        var other = new One2OneChannel<int>();
        var writer = Task.Run(async () =>
        {
            Task write = channel.WriteAsync(42).AsTask();
            await other.WriteAsync(write.IsCompleted ? 1 : 0);
            await write;
        });

        Assert.Equal(0, await other.ReadAsync());
        Assert.False(writer.IsCompleted);
        Assert.Equal(42, await channel.ReadAsync());
        await writer;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Read_UnbufferedThreadReaderNoWriter_DoesNotReturnBeforeWrite(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        var steps = new Steps();
        var reader = ThreadParty.Start(() =>
        {
            steps.Reach(1);
            return channel.Read();
        });

        steps.WaitFor(1);
        reader.WaitUntilBlockedOrEnded();
        Assert.False(reader.Completion.IsCompleted);

        await channel.WriteAsync(7);
        Assert.Equal(7, await reader.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_UnbufferedNoWriter_DoesNotCompleteBeforeWrite(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);

        ValueTask<int> read = channel.ReadAsync();
        Assert.False(read.IsCompleted);

        // The reader is parked, so the write finds it and completes at once.
        ValueTask write = channel.WriteAsync(7);
        Assert.True(write.IsCompletedSuccessfully);
        Assert.Equal(7, await read);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Write_ThreadWriterThousandValues_ArriveInOrder(ChannelKind kind)
    {
        const int Count = 1000;
        var channel = TestChannels.Create<int>(kind);
        var writer = ThreadParty.Start(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                channel.Write(i);
            }
        });

        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(i, await channel.ReadAsync());
        }

        await writer.Completion;
    }

    [Fact(Timeout = 20_000)]
    public async Task Write_ReferenceValue_ReaderGetsSameInstance()
    {
        var channel = new One2OneChannel<object>();
        var value = new object();

        ValueTask write = channel.WriteAsync(value);
        Assert.Same(value, await channel.ReadAsync());
        await write;
    }
}
