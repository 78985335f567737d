namespace CspNet.Tests.Channels;

/// <summary>
/// A channel keeps its async waiters for reuse (one for either direction, a pair once one was
/// busy): a reused waiter carries nothing of its earlier operation (value, direction, token,
/// cancellation), and a waiter still busy is never taken for another operation.
/// </summary>
public class AsyncWaiterReuseTests
{
    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_ParksWhileTheWokenReaderHasNotResumed_BothValuesArriveInOrder(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        ValueTask<int> first = channel.ReadAsync(); // parks; not awaited yet, so its waiter stays busy
        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(1)));

        ValueTask second = channel.WriteAsync(2); // parks on a second waiter
        Assert.False(second.IsCompleted);

        Assert.Equal(1, await first);
        Assert.Equal(2, await channel.ReadAsync());
        await second;

        // Both waiters are idle again and serve the next rounds.
        for (int i = 3; i < 6; i++)
        {
            ValueTask write = channel.WriteAsync(i);
            Assert.Equal(i, await channel.ReadAsync());
            await write;
        }
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAsync_WaiterLastUsedByAWriter_ReceivesTheNewValue(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        ValueTask write = channel.WriteAsync(1);
        Assert.Equal(1, await channel.ReadAsync());
        await write;

        ValueTask<int> read = channel.ReadAsync(); // the same waiter, now a reader
        Assert.False(read.IsCompleted);
        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(2)));

        Assert.Equal(2, await read);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task GetResult_StaleTokenAfterTheWaiterWasReused_ThrowsAndTheParkedWriteStillCompletes(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        ValueTask stale = channel.WriteAsync(1);
        Assert.Equal(1, await channel.ReadAsync());
        await stale;

        ValueTask parked = channel.WriteAsync(2); // reuses the waiter `stale` pointed at
        Assert.False(parked.IsCompleted);

        Assert.Throws<InvalidOperationException>(() => stale.GetAwaiter().GetResult());
        Assert.False(parked.IsCompleted);
        Assert.Equal(2, await channel.ReadAsync());
        await parked;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task GetResult_BeforeCompletion_ThrowsAndLeavesTheWriteParked(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        ValueTask parked = channel.WriteAsync(7);

        Assert.Throws<InvalidOperationException>(() => parked.GetAwaiter().GetResult());

        Assert.Equal(7, await channel.ReadAsync());
        await parked;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_AfterACancellableWriteCompleted_ItsTokenNoLongerCancelsTheReusedWaiter(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        ValueTask first = channel.WriteAsync(1, cancellation.Token);
        Assert.Equal(1, await channel.ReadAsync());
        await first;

        ValueTask second = channel.WriteAsync(2); // the same waiter, not cancellable this time
        await cancellation.CancelAsync();

        Assert.False(second.IsCompleted);
        Assert.Equal(2, await channel.ReadAsync());
        await second;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task WriteAsync_AfterTheCachedWaiterWasCancelled_DeliversOnlyTheNewValue(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        ValueTask cancelled = channel.WriteAsync(1, cancellation.Token);
        await cancellation.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await cancelled);

        using var second = new CancellationTokenSource();
        ValueTask write = channel.WriteAsync(2, second.Token); // the same waiter, registered again

        Assert.Equal(2, await channel.ReadAsync());
        await write;
        await TestChannels.AssertNothingToReadAsync(channel);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.Any2One)]
    [InlineData(ChannelKind.Any2Any)]
    public async Task Poison_ThreeWritersOnCachedAndUncachedWaiters_EachFailsAndNothingIsReadable(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        ValueTask cached = channel.WriteAsync(1);
        ValueTask second = channel.WriteAsync(2, cancellation.Token);
        ValueTask uncached = channel.WriteAsync(3);
        Assert.False(cached.IsCompleted || second.IsCompleted || uncached.IsCompleted);

        channel.Poison();

        await Assert.ThrowsAsync<PoisonException>(async () => await cached);
        await Assert.ThrowsAsync<PoisonException>(async () => await second);
        await Assert.ThrowsAsync<PoisonException>(async () => await uncached);

        await Assert.ThrowsAsync<PoisonException>(async () => await channel.ReadAsync());
    }

    [Theory(Timeout = 20_000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task WriteAsync_AfterTheWaitersLastWriteFailedInTheBuffer_CompletesWithoutTheOldError(bool cancellable)
    {
        var channel = new One2OneChannel<int>(new RefusingBuffer(refused: 13));
        using var cancellation = new CancellationTokenSource();
        CancellationToken token = cancellable ? cancellation.Token : CancellationToken.None;
        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(1, token)));
        ValueTask refused = channel.WriteAsync(13, token); // parks: the buffer is full

        Assert.Equal(1, await channel.ReadAsync()); // moves 13 in: the buffer refuses it
        await Assert.ThrowsAsync<InvalidDataException>(async () => await refused);

        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(3, token)));
        ValueTask parked = channel.WriteAsync(4, token); // the same waiter again
        Assert.Equal(3, await channel.ReadAsync());
        await parked;
        Assert.Equal(4, await channel.ReadAsync());
    }

    /// <summary>A one-slot buffer that refuses one value (its Put throws).</summary>
    private sealed class RefusingBuffer(int refused) : IBuffer<int>
    {
        private readonly Queue<int> _items = new();

        public int Count => _items.Count;

        public bool IsFull => _items.Count >= 1;

        public void Put(int item)
        {
            if (item == refused)
            {
                throw new InvalidDataException($"This buffer refuses {item}.");
            }

            _items.Enqueue(item);
        }

        public int Take() => _items.Dequeue();
    }
}
