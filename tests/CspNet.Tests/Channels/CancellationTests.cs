namespace CspNet.Tests.Channels;

/// <summary>
/// A cancelled read has taken nothing and a cancelled write has delivered nothing: the value
/// goes to (or comes from) another party instead.
/// </summary>
public class CancellationTests
{
    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_CancelledWhilePending_ThrowsAndLaterWriteWaitsForAnotherReader(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
        Assert.False(read.IsCompleted);

        await cancellation.CancelAsync();

        var exception = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read);
        Assert.Equal(cancellation.Token, exception.CancellationToken);

        // The cancelled reader is gone: a write now finds nobody and waits.
        Task write = channel.WriteAsync(42).AsTask();
        Assert.False(write.IsCompleted);
        Assert.Equal(42, await channel.ReadAsync());
        await write;
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2Any)]
    [InlineData(ChannelKind.Any2Any)]
    public async Task ReadAsync_FirstOfTwoReadersCancelled_WriteGoesToSecondReader(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task<int> first = channel.ReadAsync(cancellation.Token).AsTask();
        Task<int> second = channel.ReadAsync().AsTask();

        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => first);

        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(42)));
        Assert.Equal(42, await second);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_CancelledWhilePending_ThreadWriterWaitsForNextReader(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read);

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

        Assert.Equal(42, await channel.ReadAsync());
        await writer.Completion;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_CancelledOnEmptyBufferedChannel_LaterValueGoesToNextReader(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(2));
        using var cancellation = new CancellationTokenSource();
        Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read);

        await channel.WriteAsync(5);

        Assert.Equal(5, await channel.ReadAsync());
        await TestChannels.AssertNothingToReadAsync(channel);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_CancelledWhilePending_DeliversNothing(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task write = channel.WriteAsync(1, cancellation.Token).AsTask();
        Assert.False(write.IsCompleted);

        await cancellation.CancelAsync();

        var exception = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write);
        Assert.Equal(cancellation.Token, exception.CancellationToken);

        // The cancelled value is gone: a read now finds nothing and waits for the next write.
        Task<int> read = channel.ReadAsync().AsTask();
        Assert.False(read.IsCompleted);
        await channel.WriteAsync(2);
        Assert.Equal(2, await read);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.Any2One)]
    [InlineData(ChannelKind.Any2Any)]
    public async Task WriteAsync_FirstOfTwoWritersCancelled_ReaderGetsSecondValue(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task first = channel.WriteAsync(1, cancellation.Token).AsTask();
        Task second = channel.WriteAsync(2).AsTask();

        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => first);

        Assert.Equal(2, await channel.ReadAsync());
        await second;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_CancelledWhilePending_ThreadReaderGetsNextValueOnly(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task write = channel.WriteAsync(1, cancellation.Token).AsTask();
        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write);

        var steps = new Steps();
        var reader = ThreadParty.Start(() =>
        {
            steps.Reach(1);
            return channel.Read();
        });
        steps.WaitFor(1);
        reader.WaitUntilBlockedOrEnded();
        Assert.False(reader.Completion.IsCompleted);

        await channel.WriteAsync(2);
        Assert.Equal(2, await reader.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_CancelledWhileWaitingOnFullBuffer_DeliversNothing(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(1));
        await channel.WriteAsync(1);
        using var cancellation = new CancellationTokenSource();
        Task write = channel.WriteAsync(2, cancellation.Token).AsTask();
        Assert.False(write.IsCompleted);

        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write);

        Assert.Equal(1, await channel.ReadAsync());
        await TestChannels.AssertNothingToReadAsync(channel);
        await channel.WriteAsync(3);
        Assert.Equal(3, await channel.ReadAsync());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_AlreadyCancelledTokenWithWriterWaiting_IsCanceledAndTakesNothing(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task write = channel.WriteAsync(1).AsTask();

        Task<int> read = channel.ReadAsync(new CancellationToken(canceled: true)).AsTask();

        Assert.True(read.IsCanceled);
        Assert.False(write.IsCompleted);
        Assert.Equal(1, await channel.ReadAsync());
        await write;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_AlreadyCancelledTokenWithBufferedValue_IsCanceledAndTakesNothing(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(1));
        await channel.WriteAsync(1);

        Task<int> read = channel.ReadAsync(new CancellationToken(canceled: true)).AsTask();

        Assert.True(read.IsCanceled);
        Assert.Equal(1, await channel.ReadAsync());
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_AlreadyCancelledTokenWithReaderWaiting_IsCanceledAndDeliversNothing(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task<int> read = channel.ReadAsync().AsTask();

        Task write = channel.WriteAsync(1, new CancellationToken(canceled: true)).AsTask();

        Assert.True(write.IsCanceled);
        Assert.False(read.IsCompleted);
        await channel.WriteAsync(2);
        Assert.Equal(2, await read);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_AlreadyCancelledTokenWithRoomInBuffer_IsCanceledAndStoresNothing(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(2));

        Task write = channel.WriteAsync(1, new CancellationToken(canceled: true)).AsTask();

        Assert.True(write.IsCanceled);
        await TestChannels.AssertNothingToReadAsync(channel);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_CancelledAfterWriterDelivered_ReturnsValue(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(7)));

        await cancellation.CancelAsync();

        Assert.Equal(7, await read);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_CancelledAfterReaderTook_Completes(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task write = channel.WriteAsync(7, cancellation.Token).AsTask();
        Assert.Equal(7, await channel.ReadAsync());

        await cancellation.CancelAsync();

        await write;
        Assert.True(write.IsCompletedSuccessfully);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_CancellableTokenValueAvailable_CompletesAtOnce(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task write = channel.WriteAsync(3).AsTask();

        Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();

        Assert.True(read.IsCompletedSuccessfully);
        Assert.Equal(3, await read);
        await write;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadWriteAsync_ManyCancelledOperationsInARow_ChannelStillWorks(ChannelKind kind)
    {
        // Cancelled waiters are recycled; each round must leave the channel clean.
        var channel = TestChannels.Create<int>(kind);
        for (int round = 0; round < 200; round++)
        {
            using var cancellation = new CancellationTokenSource();
            Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
            await cancellation.CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read);

            using var writeCancellation = new CancellationTokenSource();
            Task write = channel.WriteAsync(-1, writeCancellation.Token).AsTask();
            await writeCancellation.CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write);

            Task<int> realRead = channel.ReadAsync(CancellationToken.None).AsTask();
            Assert.False(realRead.IsCompleted);
            await channel.WriteAsync(round);
            Assert.Equal(round, await realRead);
        }
    }

    [Fact(Timeout = 20_000)]
    public async Task ReadAsync_CancelledFromAnotherThreadWhileWriterRaces_ValueIsReadExactlyOnce()
    {
        // Cancellation and a writer race for the same parked reader; whichever wins, the value is
        // read exactly once: by the cancelled read if the writer won, else by the next read.
        var channel = new One2OneChannel<int>();
        for (int round = 0; round < 2_000; round++)
        {
            using var cancellation = new CancellationTokenSource();
            Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
            Task cancel = Task.Run(cancellation.Cancel);
            Task write = channel.WriteAsync(round).AsTask();
            await cancel;

            int received;
            try
            {
                received = await read;
            }
            catch (OperationCanceledException)
            {
                received = await channel.ReadAsync();
            }

            Assert.Equal(round, received);
            await write;
        }
    }

    [Fact(Timeout = 20_000)]
    public async Task WriteAsync_CancelledFromAnotherThreadWhileReaderRaces_ValueIsDeliveredAtMostOnce()
    {
        var channel = new One2OneChannel<int>();
        for (int round = 0; round < 2_000; round++)
        {
            using var cancellation = new CancellationTokenSource();
            Task write = channel.WriteAsync(round, cancellation.Token).AsTask();
            Task cancel = Task.Run(cancellation.Cancel);
            Task<int> read = channel.ReadAsync().AsTask();
            await cancel;

            bool delivered;
            try
            {
                await write;
                delivered = true;
            }
            catch (OperationCanceledException)
            {
                delivered = false;
            }

            if (delivered)
            {
                Assert.Equal(round, await read);
            }
            else
            {
                // The reader is still waiting: it must get the next value, not the cancelled one.
                Assert.False(read.IsCompleted);
                await channel.WriteAsync(-round - 1);
                Assert.Equal(-round - 1, await read);
            }
        }
    }
}
