using CspNet.Alternation;
using CspNet.Internal;

namespace CspNet.Tests.Channels.Holds;

/// <summary>
/// Holds (<c>CspChannel.TryHold/HoldAsync/Commit/Release</c>): a value set aside for a remote
/// selecting reader. A held writer stays blocked until the commit; a release puts everything back
/// exactly as it was, first in line.
/// </summary>
public class ChannelHoldTests
{
    [Fact(Timeout = 20_000)]
    public async Task TryHold_ParkedWriter_WriterStaysBlockedUntilCommit()
    {
        var channel = new Any2AnyChannel<int>();
        Task write = channel.WriteAsync(7).AsTask();

        ChannelHold<int>? hold = channel.TryHold();

        Assert.NotNull(hold);
        Assert.Equal(7, hold.Item);
        Assert.True(hold.FromWriter);
        Assert.False(write.IsCompleted);
        Assert.Null(channel.TryHold());

        CspChannel<int>.Commit(hold);
        await write;
        Assert.Null(channel.TryHold());
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_TwoParkedWriters_HeldWriterFirstInLineAgain()
    {
        var channel = new Any2AnyChannel<int>();
        Task first = channel.WriteAsync(1).AsTask();
        Task second = channel.WriteAsync(2).AsTask();
        ChannelHold<int> hold = channel.TryHold()!;

        channel.Release(hold);

        Assert.False(first.IsCompleted);
        Assert.Equal(1, await channel.ReadAsync());
        await first;
        Assert.False(second.IsCompleted);
        Assert.Equal(2, await channel.ReadAsync());
        await second;
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_ReaderParkedMeanwhile_ReaderTakesTheValueAndWriteCompletes()
    {
        var channel = new One2AnyChannel<int>();
        Task write = channel.WriteAsync(5).AsTask();
        ChannelHold<int> hold = channel.TryHold()!;
        Task<int> read = channel.CreateIn().ReadAsync().AsTask();
        Assert.False(read.IsCompleted);

        channel.Release(hold);

        Assert.Equal(5, await read);
        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_SelectionWaitingMeanwhile_SelectionChoosesTheValue()
    {
        var channel = new One2AnyChannel<int>();
        Task write = channel.WriteAsync(9).AsTask();
        ChannelHold<int> hold = channel.TryHold()!;
        AltingChannelIn<int> input = channel.CreateIn();
        var alt = new Alternative(input);
        Task<int> select = alt.PriSelectAsync().AsTask();
        Assert.False(select.IsCompleted);

        channel.Release(hold);

        Assert.Equal(0, await select);
        Assert.Equal(9, await input.ReadAsync());
        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_BufferedItems_FifoOrderRestored()
    {
        var channel = new Any2AnyChannel<int>(new FifoBuffer<int>(3));
        for (int i = 1; i <= 3; i++)
        {
            await channel.WriteAsync(i);
        }

        Task fourth = channel.WriteAsync(4).AsTask(); // parks: the buffer is full
        ChannelHold<int> hold = channel.TryHold()!;
        Assert.Equal(1, hold.Item);
        Assert.False(hold.FromWriter);
        await fourth; // the freed slot took it, as after a read

        channel.Release(hold);

        for (int i = 1; i <= 4; i++)
        {
            Assert.Equal(i, await channel.ReadAsync());
        }
    }

    [Fact(Timeout = 20_000)]
    public async Task TryHold_BufferedItemHeld_NextHoldWaitsUntilSettled()
    {
        var channel = new Any2AnyChannel<int>(new FifoBuffer<int>(4));
        for (int i = 1; i <= 3; i++)
        {
            await channel.WriteAsync(i);
        }

        ChannelHold<int> first = channel.TryHold()!;

        // A second hold could commit 2 while 1 comes back, and its reader would see 2, then 1.
        Assert.Null(channel.TryHold());
        Task<ChannelHold<int>> waiting = channel.HoldAsync(CancellationToken.None).AsTask();
        Assert.False(waiting.IsCompleted);

        channel.Release(first);
        ChannelHold<int> again = await waiting;
        Assert.Equal(1, again.Item);
        CspChannel<int>.Commit(again);

        Assert.Equal(2, await channel.ReadAsync());
        Assert.Equal(3, await channel.ReadAsync());
    }

    /// <summary>
    /// A reader reads while a buffered value is held: it must not take the value behind it, which
    /// would put the released one after it (the reader saw 0, 2, 1 before reads waited for the hold).
    /// </summary>
    [Fact(Timeout = 20_000)]
    public async Task Release_ReaderReadsWhileBufferedValueHeld_ReaderSeesWriterOrder()
    {
        var channel = new One2AnyChannel<int>(new FifoBuffer<int>(2));
        AltingChannelIn<int> reader = channel.CreateIn();
        await channel.WriteAsync(0);
        await channel.WriteAsync(1);
        var seen = new List<int> { await reader.ReadAsync() };
        ChannelHold<int> hold = channel.TryHold()!;
        Assert.Equal(1, hold.Item);
        await channel.WriteAsync(2);

        Task<int> next = reader.ReadAsync().AsTask();
        channel.Release(hold);
        seen.Add(await next);
        seen.Add(await reader.ReadAsync());

        Assert.Equal([0, 1, 2], seen);
    }

    [Fact(Timeout = 20_000)]
    public async Task Commit_ReaderParkedWhileBufferedValueHeld_ReaderTakesTheNextValue()
    {
        var channel = new One2AnyChannel<int>(new FifoBuffer<int>(2));
        AltingChannelIn<int> reader = channel.CreateIn();
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);
        ChannelHold<int> hold = channel.TryHold()!;

        Task<int> next = reader.ReadAsync().AsTask();
        Assert.False(next.IsCompleted);
        CspChannel<int>.Commit(hold);

        Assert.Equal(2, await next);
        Assert.Null(channel.TryHold());
    }

    /// <summary>
    /// The poison while a buffered value is held: a reader must neither take the value behind it
    /// nor give up with the poison while the held value may come back to it.
    /// </summary>
    [Fact(Timeout = 20_000)]
    public async Task Release_PoisonedWhileBufferedValueHeld_ReaderTakesEveryValueInOrderThenPoison()
    {
        var channel = new One2AnyChannel<int>(new FifoBuffer<int>(2));
        AltingChannelIn<int> reader = channel.CreateIn();
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);
        ChannelHold<int> hold = channel.TryHold()!;
        channel.Poison();

        Task<int> next = reader.ReadAsync().AsTask();
        channel.Release(hold);

        Assert.Equal(1, await next);
        Assert.Equal(2, await reader.ReadAsync());
        await Assert.ThrowsAsync<PoisonException>(() => reader.ReadAsync().AsTask());
    }

    [Fact(Timeout = 20_000)]
    public async Task Commit_PoisonedWhileReaderWaitsBesideAHeldValue_ReaderGetsThePoison()
    {
        var channel = new One2AnyChannel<int>(new FifoBuffer<int>(2));
        AltingChannelIn<int> reader = channel.CreateIn();
        await channel.WriteAsync(1);
        ChannelHold<int> hold = channel.TryHold()!;
        Task<int> next = reader.ReadAsync().AsTask();

        // The held value may still come back to this reader: the poison leaves it waiting.
        channel.Poison();
        Assert.False(next.IsCompleted);
        CspChannel<int>.Commit(hold);

        await Assert.ThrowsAsync<PoisonException>(() => next);
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_SelectionAndOfferParkedWhileBufferedValueHeld_PairInOrderAfterwards()
    {
        var channel = new One2AnyChannel<int>(new FifoBuffer<int>(1));
        AltingChannelIn<int> reader = channel.CreateIn();
        await channel.WriteAsync(1);
        ChannelHold<int> hold = channel.TryHold()!;
        await channel.WriteAsync(2);

        // Both park: the reader may take nothing behind the held 1, and the buffer is full.
        Task<int> offered = new Alternative(channel.Out.Offer(3)).PriSelectAsync().AsTask();
        Task<int> selected = new Alternative(reader).PriSelectAsync().AsTask();
        Assert.False(offered.IsCompleted);
        Assert.False(selected.IsCompleted);

        channel.Release(hold);

        Assert.Equal(0, await selected);
        Assert.Equal(1, await reader.ReadAsync());
        Assert.Equal(0, await offered);
        Assert.Equal(2, await reader.ReadAsync());
        Assert.Equal(3, await reader.ReadAsync());
    }

    [Fact(Timeout = 20_000)]
    public async Task Read_ReleasedItemInFrontOfAFullBufferWithAParkedWriter_OrderKeptAndWriterCompletes()
    {
        var channel = new Any2AnyChannel<int>(new FifoBuffer<int>(2));
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);
        ChannelHold<int> hold = channel.TryHold()!;
        await channel.WriteAsync(3); // into the slot the hold freed
        Task fourth = channel.WriteAsync(4).AsTask(); // parks: the buffer is full
        channel.Release(hold);

        // Taking the released item frees no room in the buffer, but the parked writer moves in
        // behind it as a read would have it, and completes.
        Assert.Equal(1, await channel.ReadAsync());
        await fourth;
        for (int i = 2; i <= 4; i++)
        {
            Assert.Equal(i, await channel.ReadAsync());
        }

        Assert.Null(channel.TryHold());
    }

    [Fact(Timeout = 20_000)]
    public async Task Commit_BufferedItem_ConsumedOnce()
    {
        var channel = new Any2AnyChannel<int>(new FifoBuffer<int>(2));
        await channel.WriteAsync(1);
        await channel.WriteAsync(2);

        CspChannel<int>.Commit(channel.TryHold()!);

        Assert.Equal(2, await channel.ReadAsync());
        Assert.Null(channel.TryHold());
    }

    [Fact(Timeout = 20_000)]
    public async Task HoldAsync_NothingThere_HoldsTheNextWriterWithoutCompletingIt()
    {
        var channel = new Any2AnyChannel<int>();
        Task<ChannelHold<int>> holding = channel.HoldAsync(CancellationToken.None).AsTask();
        Assert.False(holding.IsCompleted);

        Task write = channel.WriteAsync(3).AsTask();
        ChannelHold<int> hold = await holding;

        Assert.Equal(3, hold.Item);
        Assert.False(write.IsCompleted);
        CspChannel<int>.Commit(hold);
        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task HoldAsync_PlainReaderAheadTakesTheValue_HoldWaitsForTheNext()
    {
        var channel = new Any2AnyChannel<int>();
        Task<int> read = channel.ReadAsync().AsTask();
        Task<ChannelHold<int>> holding = channel.HoldAsync(CancellationToken.None).AsTask();

        await channel.WriteAsync(1); // to the reader ahead
        Assert.Equal(1, await read);
        Task write = channel.WriteAsync(2).AsTask();

        ChannelHold<int> hold = await holding;
        Assert.Equal(2, hold.Item);
        CspChannel<int>.Commit(hold);
        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task HoldAsync_Cancelled_HoldsNothing()
    {
        var channel = new Any2AnyChannel<int>();
        using var cancellation = new CancellationTokenSource();
        Task<ChannelHold<int>> holding = channel.HoldAsync(cancellation.Token).AsTask();

        await cancellation.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => holding);
        Task write = channel.WriteAsync(4).AsTask();
        Assert.Equal(4, await channel.ReadAsync());
        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenHoldableAsync_WriterParks_CompletesAndTakesNothing()
    {
        var channel = new One2AnyChannel<int>();
        Task watch = channel.WhenHoldableAsync(CancellationToken.None).AsTask();
        Assert.False(watch.IsCompleted);

        Task write = channel.WriteAsync(8).AsTask();

        await watch;
        Assert.False(write.IsCompleted);
        Assert.Equal(8, await channel.ReadAsync());
        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenHoldableAsync_Poisoned_Completes()
    {
        var channel = new Any2AnyChannel<int>();
        Task watch = channel.WhenHoldableAsync(CancellationToken.None).AsTask();

        channel.Poison();

        await watch;
        Assert.Throws<PoisonException>(() => channel.TryHold());
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenHoldableAsync_Cancelled_LeavesNothingParked()
    {
        var channel = new One2AnyChannel<int>();
        using var cancellation = new CancellationTokenSource();
        Task watch = channel.WhenHoldableAsync(cancellation.Token).AsTask();

        await cancellation.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => watch);
        Assert.Contains("0 readers", channel.DebuggerDisplay, StringComparison.Ordinal);
    }

    [Fact(Timeout = 20_000)]
    public async Task Commit_PoisonedWhileHeld_WriterCompletes()
    {
        var channel = new Any2AnyChannel<int>();
        Task write = channel.WriteAsync(1).AsTask();
        ChannelHold<int> hold = channel.TryHold()!;

        channel.Poison();
        Assert.False(write.IsCompleted);
        CspChannel<int>.Commit(hold);

        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_PoisonedWhileHeld_WriterFailsWithPoison()
    {
        var channel = new Any2AnyChannel<int>();
        Task write = channel.WriteAsync(1).AsTask();
        ChannelHold<int> hold = channel.TryHold()!;

        channel.Poison();
        channel.Release(hold);

        await Assert.ThrowsAsync<PoisonException>(() => write);
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_BufferedItemPoisonedWhileHeld_ItemStillReadThenPoison()
    {
        var channel = new Any2AnyChannel<int>(new FifoBuffer<int>(2));
        await channel.WriteAsync(1);
        ChannelHold<int> hold = channel.TryHold()!;

        channel.Poison();
        channel.Release(hold);

        Assert.Equal(1, await channel.ReadAsync());
        await Assert.ThrowsAsync<PoisonException>(() => channel.ReadAsync().AsTask());
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_HeldWriterCancelledMeanwhile_WriteCancelledAndNothingLeft()
    {
        var channel = new Any2AnyChannel<int>();
        using var cancellation = new CancellationTokenSource();
        Task write = channel.WriteAsync(1, cancellation.Token).AsTask();
        ChannelHold<int> hold = channel.TryHold()!;

        await cancellation.CancelAsync();
        Assert.False(write.IsCompleted); // held: its cancellation waits for the hold's outcome
        channel.Release(hold);

        var cancelled = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write);
        Assert.Equal(cancellation.Token, cancelled.CancellationToken);
        Assert.Null(channel.TryHold());
    }

    [Fact(Timeout = 20_000)]
    public async Task Commit_HeldWriterCancelledMeanwhile_WriteCompletes()
    {
        var channel = new Any2AnyChannel<int>();
        using var cancellation = new CancellationTokenSource();
        Task write = channel.WriteAsync(1, cancellation.Token).AsTask();
        ChannelHold<int> hold = channel.TryHold()!;

        await cancellation.CancelAsync();
        CspChannel<int>.Commit(hold);

        await write; // the value was taken: the write happened, as when a reader wins the race
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_HeldThreadWriterInterrupted_WriteThrowsInterrupted()
    {
        var channel = new Any2AnyChannel<int>();
        var writer = ThreadParty.Start(() => channel.Write(1));
        ChannelHold<int> hold = await channel.HoldAsync(CancellationToken.None);

        writer.Interrupt();
        channel.Release(hold);

        await Assert.ThrowsAsync<ThreadInterruptedException>(() => writer.Completion);
        Assert.Null(channel.TryHold());
    }

    [Theory(Timeout = 60_000)]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(4)]
    public async Task HoldsAndReaders_ManyValues_EachReadOrCommittedExactlyOnce(int capacity)
    {
        const int Count = 20_000;
        var channel = capacity == 0 ? new Any2AnyChannel<int>() : new Any2AnyChannel<int>(new FifoBuffer<int>(capacity));
        var seen = new int[Count];
        int total = 0;
        var allSeen = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void See(int value)
        {
            Interlocked.Increment(ref seen[value]);
            if (Interlocked.Increment(ref total) == Count)
            {
                allSeen.SetResult();
            }
        }

        Task writer = Task.Run(async () =>
        {
            for (int i = 0; i < Count; i++)
            {
                await channel.WriteAsync(i);
            }
        });
        Task holder = Task.Run(async () =>
        {
            var random = new Random(1);
            int last = -1;
            while (true)
            {
                ChannelHold<int> hold;
                try
                {
                    hold = await channel.HoldAsync(CancellationToken.None);
                }
                catch (PoisonException)
                {
                    return;
                }

                if (random.Next(2) == 0)
                {
                    channel.Release(hold);
                }
                else
                {
                    Assert.True(hold.Item > last, "One reader takes one writer's values in order.");
                    last = hold.Item;
                    CspChannel<int>.Commit(hold);
                    See(hold.Item);
                }
            }
        });
        Task reader = Task.Run(async () =>
        {
            await foreach (int v in channel.ReadAllAsync())
            {
                See(v);
            }
        });

        await writer;
        await allSeen.Task;

        channel.Poison();
        await Task.WhenAll(holder, reader);
        Assert.All(seen, n => Assert.Equal(1, n));
    }
}
