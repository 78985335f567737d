using CspNet.Internal;

namespace CspNet.Tests.Channels.Holds;

/// <summary>
/// Reader claims (<c>CspChannel.TryClaimReader/WhenReaderClaimableAsync/Deliver/Release</c>): a
/// parked plain reader set aside for a remote selecting writer. The claimed read stays incomplete
/// until the value is delivered; a release puts the reader back first in line, or pairs it with a
/// value that came meanwhile.
/// </summary>
public class ReaderClaimTests
{
    [Fact(Timeout = 20_000)]
    public async Task TryClaimReader_ParkedReader_ReadCompletesOnlyWithTheDeliveredValue()
    {
        var channel = new Any2AnyChannel<int>();
        Task<int> read = channel.ReadAsync().AsTask();

        ReaderClaim<int>? claim = channel.TryClaimReader();

        Assert.NotNull(claim);
        Assert.Null(channel.TryClaimReader());
        Assert.False(read.IsCompleted);
        channel.Deliver(claim, 7);
        Assert.Equal(7, await read);
    }

    [Fact(Timeout = 20_000)]
    public async Task TryClaimReader_NoReaderOrSelectingReader_ClaimsNothing()
    {
        var channel = new Any2AnyChannel<int>();
        Assert.Null(channel.TryClaimReader());

        // A selecting reader cannot be set aside: claiming it would commit its selection. (An async
        // selection has parked its waiter when PriSelectAsync returns without a result.)
        AltingChannelIn<int> input = channel.CreateIn();
        ValueTask<int> selecting = new Alternative([input]).PriSelectAsync();
        Assert.False(selecting.IsCompleted);
        Assert.Null(channel.TryClaimReader());
        await channel.WriteAsync(6);
        Assert.Equal(0, await selecting);
        Assert.Equal(6, await input.ReadAsync());
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_TwoParkedReaders_ClaimedReaderFirstInLineAgain()
    {
        var channel = new Any2AnyChannel<int>();
        Task<int> first = channel.ReadAsync().AsTask();
        Task<int> second = channel.ReadAsync().AsTask();
        ReaderClaim<int> claim = channel.TryClaimReader()!;

        channel.Release(claim);

        Assert.False(first.IsCompleted);
        await channel.WriteAsync(1);
        Assert.Equal(1, await first);
        Assert.False(second.IsCompleted);
        await channel.WriteAsync(2);
        Assert.Equal(2, await second);
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_WriterParkedMeanwhile_ReaderTakesItsValueAndWriteCompletes()
    {
        var channel = new Any2OneChannel<int>();
        Task<int> read = channel.ReadAsync().AsTask();
        ReaderClaim<int> claim = channel.TryClaimReader()!;
        Task write = channel.CreateOut().WriteAsync(5).AsTask();
        Assert.False(write.IsCompleted);

        channel.Release(claim);

        Assert.Equal(5, await read);
        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_OfferParkedMeanwhile_ReaderTakesTheOffer()
    {
        var channel = new Any2OneChannel<int>();
        Task<int> read = channel.ReadAsync().AsTask();
        ReaderClaim<int> claim = channel.TryClaimReader()!;
        AltingChannelOut<int> output = channel.CreateOut();
        output.Offer(9);
        ValueTask<int> selecting = new Alternative([output]).PriSelectAsync();
        Assert.False(selecting.IsCompleted);

        channel.Release(claim);

        Assert.Equal(9, await read);
        Assert.Equal(0, await selecting);
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_PoisonedWhileClaimed_ReaderFailsWithPoison()
    {
        var channel = new Any2AnyChannel<int>();
        Task<int> read = channel.ReadAsync().AsTask();
        ReaderClaim<int> claim = channel.TryClaimReader()!;
        channel.Poison();
        Assert.False(read.IsCompleted);

        channel.Release(claim);

        await Assert.ThrowsAsync<PoisonException>(() => read);
        Assert.Throws<PoisonException>(() => channel.TryClaimReader());
    }

    [Fact(Timeout = 20_000)]
    public async Task Deliver_PoisonedWhileClaimed_ReadCompletesWithTheValue()
    {
        var channel = new Any2AnyChannel<int>();
        Task<int> read = channel.ReadAsync().AsTask();
        ReaderClaim<int> claim = channel.TryClaimReader()!;
        channel.Poison();

        channel.Deliver(claim, 3);

        Assert.Equal(3, await read);
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_ClaimedReaderCancelledMeanwhile_ReadCancelledAndNothingLeft()
    {
        var channel = new Any2AnyChannel<int>();
        using var cancellation = new CancellationTokenSource();
        Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
        ReaderClaim<int> claim = channel.TryClaimReader()!;
        cancellation.Cancel();
        Assert.False(read.IsCompleted);

        channel.Release(claim);

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read);
        Assert.Null(channel.TryClaimReader());
    }

    [Fact(Timeout = 20_000)]
    public async Task Deliver_ClaimedReaderCancelledMeanwhile_ReadCompletesWithTheValue()
    {
        var channel = new Any2AnyChannel<int>();
        using var cancellation = new CancellationTokenSource();
        Task<int> read = channel.ReadAsync(cancellation.Token).AsTask();
        ReaderClaim<int> claim = channel.TryClaimReader()!;
        cancellation.Cancel();

        channel.Deliver(claim, 4);

        Assert.Equal(4, await read);
    }

    [Fact(Timeout = 20_000)]
    public async Task SettleTwice_SecondSettleChangesNothing()
    {
        var channel = new Any2AnyChannel<int>();
        Task<int> read = channel.ReadAsync().AsTask();
        ReaderClaim<int> claim = channel.TryClaimReader()!;

        channel.Deliver(claim, 1);
        channel.Release(claim);
        channel.Deliver(claim, 2);

        Assert.Equal(1, await read);
        Assert.Null(channel.TryClaimReader());
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenReaderClaimableAsync_ReaderParks_CompletesAndClaimsNothing()
    {
        var channel = new Any2AnyChannel<int>();
        Task watch = channel.WhenReaderClaimableAsync(CancellationToken.None).AsTask();
        Assert.False(watch.IsCompleted);

        Task<int> read = channel.ReadAsync().AsTask();

        await watch;
        Assert.False(read.IsCompleted);
        await channel.WriteAsync(8);
        Assert.Equal(8, await read);
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenReaderClaimableAsync_PoisonedOrCancelled_CompletesAndLeavesNothingParked()
    {
        var channel = new Any2AnyChannel<int>();
        using var cancellation = new CancellationTokenSource();
        Task cancelled = channel.WhenReaderClaimableAsync(cancellation.Token).AsTask();
        cancellation.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled);
        Assert.Contains("0 writers", channel.DebuggerDisplay, StringComparison.Ordinal);

        Task poisoned = channel.WhenReaderClaimableAsync(CancellationToken.None).AsTask();
        channel.Poison();
        await poisoned;
    }

    [Fact(Timeout = 20_000)]
    public async Task TryClaimReader_BufferHoldsValues_ClaimsNothing()
    {
        var channel = new Any2AnyChannel<int>(new FifoBuffer<int>(2));
        await channel.WriteAsync(1);
        Assert.Null(channel.TryClaimReader());
        Assert.Equal(1, await channel.ReadAsync());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(1)]
    [InlineData(4)]
    public async Task ClaimsAndWriters_ManyValues_EveryValueReadOnceAndClaimersInOrder(int readers)
    {
        const int Count = 4_000;
        var channel = new Any2AnyChannel<int>();
        var seen = new int[2 * Count];
        int total = 0;
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var readerTasks = Enumerable.Range(0, readers).Select(_ => Task.Run(async () =>
        {
            while (Volatile.Read(ref total) < 2 * Count)
            {
                int value;
                try
                {
                    value = await channel.ReadAsync();
                }
                catch (PoisonException)
                {
                    return;
                }

                Interlocked.Increment(ref seen[value]);
                if (Interlocked.Increment(ref total) == 2 * Count)
                {
                    done.SetResult();
                }
            }
        })).ToArray();

        // A claimer delivers every other claim and releases the rest; a plain writer competes.
        Task claimer = Task.Run(async () =>
        {
            var random = new Random(3);
            for (int next = 0; next < Count;)
            {
                if (channel.TryClaimReader() is not { } claim)
                {
                    await channel.WhenReaderClaimableAsync(CancellationToken.None);
                    continue;
                }

                if (random.Next(2) == 0)
                {
                    channel.Release(claim);
                }
                else
                {
                    channel.Deliver(claim, next++);
                }
            }
        });
        Task writer = Task.Run(async () =>
        {
            for (int i = Count; i < 2 * Count; i++)
            {
                await channel.WriteAsync(i);
            }
        });

        await Task.WhenAll(claimer, writer);
        await done.Task;
        channel.Poison();
        await Task.WhenAll(readerTasks);
        Assert.All(seen, s => Assert.Equal(1, s));
    }
}
