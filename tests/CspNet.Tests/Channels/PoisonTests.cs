namespace CspNet.Tests.Channels;

/// <summary>
/// Poison fails every parked party, thread or async, and every later operation, from whichever
/// end it comes; values already buffered are still read first.
/// </summary>
public class PoisonTests
{
    public static TheoryData<ChannelKind, bool> KindsAndEnds()
    {
        var data = new TheoryData<ChannelKind, bool>();
        foreach (ChannelKind kind in Enum.GetValues<ChannelKind>())
        {
            data.Add(kind, true);
            data.Add(kind, false);
        }

        return data;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndEnds))]
    public async Task Read_BlockedThreadReaderPoisoned_ThrowsPoisonException(ChannelKind kind, bool fromReadingEnd)
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

        PoisonFrom(channel, fromReadingEnd);

        await Assert.ThrowsAsync<PoisonException>(() => reader.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndEnds))]
    public async Task Write_BlockedThreadWriterPoisoned_ThrowsPoisonException(ChannelKind kind, bool fromReadingEnd)
    {
        var channel = TestChannels.Create<int>(kind);
        var steps = new Steps();
        var writer = ThreadParty.Start(() =>
        {
            steps.Reach(1);
            channel.Write(1);
        });
        steps.WaitFor(1);
        writer.WaitUntilBlockedOrEnded();

        PoisonFrom(channel, fromReadingEnd);

        await Assert.ThrowsAsync<PoisonException>(() => writer.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndEnds))]
    public async Task ReadAsync_PendingPoisoned_ThrowsPoisonException(ChannelKind kind, bool fromReadingEnd)
    {
        var channel = TestChannels.Create<int>(kind);
        Task<int> read = channel.ReadAsync().AsTask();
        Assert.False(read.IsCompleted);

        PoisonFrom(channel, fromReadingEnd);

        await Assert.ThrowsAsync<PoisonException>(() => read);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndEnds))]
    public async Task WriteAsync_PendingPoisoned_ThrowsPoisonException(ChannelKind kind, bool fromReadingEnd)
    {
        var channel = TestChannels.Create<int>(kind);
        Task write = channel.WriteAsync(1).AsTask();
        Assert.False(write.IsCompleted);

        PoisonFrom(channel, fromReadingEnd);

        await Assert.ThrowsAsync<PoisonException>(() => write);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndEnds))]
    public async Task ReadAsync_PendingWithCancellableTokenPoisoned_ThrowsPoisonException(ChannelKind kind, bool fromReadingEnd)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
        Assert.False(read.IsCompleted);

        PoisonFrom(channel, fromReadingEnd);

        await Assert.ThrowsAsync<PoisonException>(() => read);

        // Cancelling afterwards changes nothing.
        await cancellation.CancelAsync();
        await Assert.ThrowsAsync<PoisonException>(() => read);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndEnds))]
    public async Task WriteAsync_PendingWithCancellableTokenPoisoned_ThrowsPoisonException(ChannelKind kind, bool fromReadingEnd)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task write = channel.WriteAsync(1, cancellation.Token).AsTask();
        Assert.False(write.IsCompleted);

        PoisonFrom(channel, fromReadingEnd);

        await Assert.ThrowsAsync<PoisonException>(() => write);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2Any)]
    [InlineData(ChannelKind.Any2Any)]
    public async Task Poison_SeveralBlockedThreadAndAsyncReaders_AllThrowPoisonException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        var readers = new List<Task>
        {
            channel.ReadAsync().AsTask(),
            channel.ReadAsync(cancellation.Token).AsTask(),
        };
        for (int i = 0; i < 3; i++)
        {
            var steps = new Steps();
            var reader = ThreadParty.Start(() =>
            {
                steps.Reach(1);
                return channel.Read();
            });
            steps.WaitFor(1);
            reader.WaitUntilBlockedOrEnded();
            readers.Add(reader.Completion);
        }

        channel.Poison();

        foreach (Task reader in readers)
        {
            await Assert.ThrowsAsync<PoisonException>(() => reader);
        }
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.Any2One)]
    [InlineData(ChannelKind.Any2Any)]
    public async Task Poison_SeveralBlockedThreadAndAsyncWriters_AllThrowPoisonException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        var writers = new List<Task>
        {
            channel.WriteAsync(1).AsTask(),
            channel.WriteAsync(2, cancellation.Token).AsTask(),
        };
        for (int i = 0; i < 3; i++)
        {
            var steps = new Steps();
            int value = 10 + i;
            var writer = ThreadParty.Start(() =>
            {
                steps.Reach(1);
                channel.Write(value);
            });
            steps.WaitFor(1);
            writer.WaitUntilBlockedOrEnded();
            writers.Add(writer.Completion);
        }

        channel.Poison();

        foreach (Task writer in writers)
        {
            await Assert.ThrowsAsync<PoisonException>(() => writer);
        }
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Operations_AfterPoison_AllThrowPoisonException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        channel.Poison();

        Assert.Throws<PoisonException>(() => channel.Read());
        Assert.Throws<PoisonException>(() => channel.Write(1));
        await Assert.ThrowsAsync<PoisonException>(() => channel.ReadAsync().AsTask());
        await Assert.ThrowsAsync<PoisonException>(() => channel.ReadAsync(cancellation.Token).AsTask());
        await Assert.ThrowsAsync<PoisonException>(() => channel.WriteAsync(1).AsTask());
        await Assert.ThrowsAsync<PoisonException>(() => channel.WriteAsync(1, cancellation.Token).AsTask());

        // Still poisoned: a later party fails too, from a thread of its own.
        var reader = ThreadParty.Start(channel.Read);
        await Assert.ThrowsAsync<PoisonException>(() => reader.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Write_AfterPoisonWithRoomInBuffer_ThrowsAndStoresNothing(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(4));
        await channel.WriteAsync(1);
        channel.Poison();

        Assert.Throws<PoisonException>(() => channel.Write(2));
        await Assert.ThrowsAsync<PoisonException>(() => channel.WriteAsync(3).AsTask());

        Assert.Equal(1, await channel.ReadAsync());
        await Assert.ThrowsAsync<PoisonException>(() => channel.ReadAsync().AsTask());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Read_BufferedValuesAfterPoison_ReturnsThemInOrderThenThrows(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(5));
        for (int i = 1; i <= 3; i++)
        {
            await channel.WriteAsync(i);
        }

        channel.Poison();

        Assert.True(channel.IsPoisoned);
        Assert.Equal(1, channel.Read());
        Assert.Equal(2, await channel.ReadAsync());
        using var cancellation = new CancellationTokenSource();
        Assert.Equal(3, await channel.ReadAsync(cancellation.Token));
        Assert.Throws<PoisonException>(() => channel.Read());
        await Assert.ThrowsAsync<PoisonException>(() => channel.ReadAsync().AsTask());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Read_ThreadReaderAfterPoisonOfFullBuffer_DrainsThenThrows(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(100));
        for (int i = 0; i < 100; i++)
        {
            channel.Write(i);
        }

        channel.Poison();
        var reader = ThreadParty.Start(() =>
        {
            var values = new List<int>();
            try
            {
                while (true)
                {
                    values.Add(channel.Read());
                }
            }
            catch (PoisonException)
            {
                return values;
            }
        });

        Assert.Equal(Enumerable.Range(0, 100), await reader.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_WaitingOnFullBufferWhenPoisoned_ThrowsAndValueIsNotDelivered(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(2));
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);
        Task third = channel.WriteAsync(3).AsTask();
        Assert.False(third.IsCompleted);

        channel.Poison();

        await Assert.ThrowsAsync<PoisonException>(() => third);
        Assert.Equal(1, await channel.ReadAsync());
        Assert.Equal(2, await channel.ReadAsync());
        await Assert.ThrowsAsync<PoisonException>(() => channel.ReadAsync().AsTask());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Write_ThreadWriterBlockedOnFullBufferWhenPoisoned_ThrowsAndValueIsNotDelivered(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(1));
        var steps = new Steps();
        var writer = ThreadParty.Start(() =>
        {
            channel.Write(1);
            steps.Reach(1);
            channel.Write(2);
        });
        steps.WaitFor(1);
        writer.WaitUntilBlockedOrEnded();

        channel.Poison();

        await Assert.ThrowsAsync<PoisonException>(() => writer.Completion);
        Assert.Equal(1, await channel.ReadAsync());
        await Assert.ThrowsAsync<PoisonException>(() => channel.ReadAsync().AsTask());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Read_OverwriteOldestBufferAfterPoison_ReturnsNewestThenThrows(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new OverwriteOldestBuffer<int>(2));
        for (int i = 1; i <= 5; i++)
        {
            await channel.WriteAsync(i);
        }

        channel.Poison();

        Assert.Equal(4, await channel.ReadAsync());
        Assert.Equal(5, channel.Read());
        Assert.Throws<PoisonException>(() => channel.Read());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Poison_Twice_IsHarmless(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task<int> read = channel.ReadAsync().AsTask();

        channel.Poison();
        channel.Poison();
        ((IChannelOut<int>)channel).Poison();

        Assert.True(channel.IsPoisoned);
        await Assert.ThrowsAsync<PoisonException>(() => read);
        await Assert.ThrowsAsync<PoisonException>(() => channel.WriteAsync(1).AsTask());
    }

    [Theory]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public void IsPoisoned_BeforeAndAfterPoison_ReportsState(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Assert.False(channel.IsPoisoned);

        channel.Poison();

        Assert.True(channel.IsPoisoned);
    }

    [Theory]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public void PoisonException_FromPoisonedChannel_NamesChannelKind(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        channel.Poison();

        var exception = Assert.Throws<PoisonException>(() => channel.Write(1));

        Assert.Contains(kind + "Channel", exception.Message, StringComparison.Ordinal);
        Assert.Contains("poisoned", exception.Message, StringComparison.Ordinal);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task Poison_FromThreadWriterAfterWrites_AsyncReaderGetsValuesThenPoison(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        var writer = ThreadParty.Start(() =>
        {
            channel.Write(1);
            channel.Write(2);
            channel.Poison();
        });

        Assert.Equal(1, await channel.ReadAsync());
        Assert.Equal(2, await channel.ReadAsync());
        await writer.Completion;
        await Assert.ThrowsAsync<PoisonException>(() => channel.ReadAsync().AsTask());
    }

    [Fact(Timeout = 30_000)]
    public async Task Poison_RacingWithWriteAndCancelledRead_WriteSucceedsExactlyWhenReadGotValue()
    {
        // Poison, cancellation and a writer race for one parked reader. Whatever wins, the outcome
        // is consistent: the write succeeded if and only if the read returned its value.
        for (int round = 0; round < 1_000; round++)
        {
            var channel = new One2OneChannel<int>();
            using var cancellation = new CancellationTokenSource();
            Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
            Task write = Task.Run(async () => await channel.WriteAsync(round));
            Task cancel = Task.Run(cancellation.Cancel);
            Task poison = Task.Run(channel.Poison);
            await Task.WhenAll(cancel, poison);

            Exception? writeError = await Record(write);
            Exception? readError = await Record(read);

            Assert.True(writeError is null or PoisonException, $"Round {round}: write failed with {writeError}");
            Assert.True(readError is null or PoisonException or OperationCanceledException, $"Round {round}: read failed with {readError}");
            Assert.Equal(writeError is null, readError is null);
            if (readError is null)
            {
                Assert.Equal(round, await read);
            }

            Assert.True(channel.IsPoisoned);
        }
    }

    [Fact(Timeout = 30_000)]
    public async Task Poison_RacingWithThreadWriterAndCancelledWrite_NoValueIsLostOrDuplicated()
    {
        // Two writers (one async with a token that gets cancelled, one blocking thread) race with
        // a reader and poison on a buffered Any2One channel: every value the reader gets was
        // written successfully, and every successful write is read (the buffer is drained).
        for (int round = 0; round < 300; round++)
        {
            var channel = new Any2OneChannel<int>(new FifoBuffer<int>(1));
            using var cancellation = new CancellationTokenSource();
            Task asyncWrite = Task.Run(async () => await channel.WriteAsync(1, cancellation.Token));
            var threadWrite = ThreadParty.Start(() => channel.Write(2));
            Task cancel = Task.Run(cancellation.Cancel);
            Task<int> firstRead = Task.Run(async () => await channel.ReadAsync());
            await Task.WhenAll(cancel, Record(firstRead));
            channel.Poison();

            var written = new List<int>();
            if (await Record(asyncWrite) is null)
            {
                written.Add(1);
            }

            if (await Record(threadWrite.Completion) is null)
            {
                written.Add(2);
            }

            var read = new List<int>();
            if (await Record(firstRead) is null)
            {
                read.Add(await firstRead);
            }

            read.AddRange(channel.ReadAll());
            Assert.Equal(written.Order(), read.Order());
        }
    }

    private static async Task<Exception?> Record(Task task)
    {
        try
        {
            await task;
            return null;
        }
#pragma warning disable CA1031 // The test inspects whichever exception the race produced.
        catch (Exception exception)
#pragma warning restore CA1031
        {
            return exception;
        }
    }

    private static void PoisonFrom(CspChannel<int> channel, bool fromReadingEnd)
    {
        if (fromReadingEnd)
        {
            ((IChannelIn<int>)channel).Poison();
        }
        else
        {
            ((IChannelOut<int>)channel).Poison();
        }
    }
}
