using CspNet.Internal;

namespace CspNet.Tests.Channels;

/// <summary>
/// Reservations (<c>CspChannel.TryReserve/PutReserved/ReleaseReservations</c>): buffer slots set
/// aside for values on their way from a remote writer. Reserved slots count as full, so the
/// buffer never holds more than its capacity. Run in Debug, every operation also checks the
/// channel's invariants (<c>AssertInvariants</c>).
/// </summary>
public class ReservationTests
{
    [Fact]
    public void TryReserve_FifoBufferWithOneValue_GrantsOnlyTheFreeSlots()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(4));
        channel.CreateOut().Write(1);

        Assert.True(channel.CanReserve);
        Assert.Equal(3, channel.TryReserve(10));
        Assert.Equal(0, channel.TryReserve(1));
        Assert.Equal(3, channel.ReservedCount);
    }

    [Fact]
    public void TryReserve_UserBufferOfUnknownCapacity_GrantsNothing()
    {
        var channel = new Any2OneChannel<int>(new UnknownCapacityBuffer());

        Assert.False(channel.CanReserve);
        Assert.Equal(0, channel.TryReserve(5));
    }

    [Fact]
    public void TryReserve_Unbuffered_GrantsNothing()
    {
        var channel = new Any2OneChannel<int>();

        Assert.False(channel.CanReserve);
        Assert.Equal(0, channel.TryReserve(5));
    }

    [Fact]
    public void TryReserve_InfiniteBuffer_GrantsAllAndWritersNeverWait()
    {
        var channel = new Any2OneChannel<int>(new InfiniteBuffer<int>());

        Assert.Equal(1000, channel.TryReserve(1000));
        Assert.True(channel.CreateOut().WriteAsync(1).AsTask().IsCompleted);
        channel.PutReserved(2);

        Assert.Equal(1, channel.In.Read());
        Assert.Equal(2, channel.In.Read());
    }

    [Fact]
    public void TryReserve_Poisoned_GrantsNothing()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(4));
        channel.In.Poison();

        Assert.Equal(0, channel.TryReserve(4));
    }

    [Fact(Timeout = 20_000)]
    public async Task WriteAsync_AllSlotsReserved_CompletesOnlyWhenAReaderTakes()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));
        Assert.Equal(2, channel.TryReserve(2));

        Task write = channel.CreateOut().WriteAsync(3).AsTask();
        Assert.False(write.IsCompleted);
        channel.PutReserved(1);
        Assert.False(write.IsCompleted);

        Assert.Equal(1, await channel.In.ReadAsync());
        await write; // the take freed a slot: the parked write moved into it
        channel.PutReserved(2);
        Assert.Equal(3, await channel.In.ReadAsync());
        Assert.Equal(2, await channel.In.ReadAsync());
        Assert.Equal(0, channel.ReservedCount);
    }

    [Fact(Timeout = 20_000)]
    public async Task ReadAsync_EmptyBufferAllSlotsReservedAndWriterParked_TakesFromTheWriter()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(1));
        Assert.Equal(1, channel.TryReserve(1));
        Task write = channel.CreateOut().WriteAsync(9).AsTask();

        Assert.Equal(9, await channel.In.ReadAsync());
        await write;
        Assert.Equal(1, channel.ReservedCount);
    }

    [Fact(Timeout = 20_000)]
    public async Task PutReserved_ReaderParked_ReaderGetsTheValue()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));
        Assert.Equal(2, channel.TryReserve(2));
        Task<int> read = channel.In.ReadAsync().AsTask();
        Assert.False(read.IsCompleted);

        channel.PutReserved(5);

        Assert.Equal(5, await read);
        Assert.Equal(1, channel.ReservedCount);
    }

    [Fact]
    public void PutReserved_NothingReserved_Throws()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));

        Assert.Throws<InvalidOperationException>(() => channel.PutReserved(1));
    }

    [Fact]
    public void PutReserved_AfterPoison_ValueIsReadableThenThePoison()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(3));
        channel.CreateOut().Write(1);
        Assert.Equal(2, channel.TryReserve(2));
        channel.In.Poison();

        channel.PutReserved(2);
        channel.PutReserved(3);

        Assert.Equal(1, channel.In.Read());
        Assert.Equal(2, channel.In.Read());
        Assert.Equal(3, channel.In.Read());
        Assert.Throws<PoisonException>(() => channel.In.Read());
    }

    [Fact(Timeout = 20_000)]
    public async Task ReleaseReservations_WritersParked_TheyMoveIntoTheFreedSlots()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));
        Assert.Equal(2, channel.TryReserve(2));
        Task first = channel.CreateOut().WriteAsync(1).AsTask();
        Task second = channel.CreateOut().WriteAsync(2).AsTask();
        Task third = channel.CreateOut().WriteAsync(3).AsTask();

        channel.ReleaseReservations(2);

        await first;
        await second;
        Assert.False(third.IsCompleted);
        Assert.Equal(0, channel.ReservedCount);
        Assert.Equal(1, await channel.In.ReadAsync());
        await third;
    }

    [Fact]
    public void ReleaseReservations_MoreThanReserved_Throws()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));
        Assert.Equal(1, channel.TryReserve(1));

        Assert.Throws<ArgumentOutOfRangeException>(() => channel.ReleaseReservations(2));
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenReservableAsync_AllSlotsTaken_CompletesWhenAReaderTakes()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));
        channel.CreateOut().Write(1);
        Assert.Equal(1, channel.TryReserve(2));

        Task room = channel.WhenReservableAsync(CancellationToken.None).AsTask();
        Assert.False(room.IsCompleted);

        Assert.Equal(1, await channel.In.ReadAsync());
        await room;
        Assert.Equal(1, channel.TryReserve(2));
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenReservableAsync_BufferFullWithAValueAHoldGaveBack_WaitsUntilAReaderTakes()
    {
        // A released hold puts its value in a front slot, beside the buffer's own: the buffer is
        // then not full for a plain writer, but has no slot to reserve. Completing at once here
        // would make a caller that waits for room and then reserves spin.
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));
        channel.CreateOut().Write(1);
        channel.CreateOut().Write(2);
        ChannelHold<int> hold = channel.TryHold()!;
        channel.Release(hold);
        Assert.Equal(0, channel.TryReserve(1));

        Task room = channel.WhenReservableAsync(CancellationToken.None).AsTask();
        Assert.False(room.IsCompleted);

        Assert.Equal(1, await channel.In.ReadAsync());
        await room;
        Assert.Equal(1, channel.TryReserve(1));
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenReservableAsync_Poisoned_Completes()
    {
        var channel = new Any2OneChannel<int>(new FifoBuffer<int>(1));
        Assert.Equal(1, channel.TryReserve(1));
        Task room = channel.WhenReservableAsync(CancellationToken.None).AsTask();
        Task poisoned = channel.WhenPoisoned();
        Assert.False(room.IsCompleted);
        Assert.False(poisoned.IsCompleted);

        channel.In.Poison();

        await room;
        await poisoned;
        Assert.True(channel.WhenPoisoned().IsCompleted);
    }

    [Fact(Timeout = 20_000)]
    public async Task WhenReservableAsync_Cancelled_LeavesNoWatcherBehind()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
        Assert.Equal(1, channel.TryReserve(1));
        using var cts = new CancellationTokenSource();
        Task room = channel.WhenReservableAsync(cts.Token).AsTask();

        await cts.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => room);
        Assert.Contains("0 readers and 0 writers waiting", channel.DebuggerDisplay, StringComparison.Ordinal);
    }

    [Fact(Timeout = 20_000)]
    public async Task WriteAsync_SingleWriterChannelWithAWatcher_ParksWithoutLookingShared()
    {
        // The watcher of a reservation waits among the writers of a One2One; the one writer parking
        // beside it is not a second party on the One end.
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
        Assert.Equal(1, channel.TryReserve(1));
        Task room = channel.WhenReservableAsync(CancellationToken.None).AsTask();

        Task write = channel.Out.WriteAsync(4).AsTask();
        Assert.False(write.IsCompleted);

        Assert.Equal(4, await channel.In.ReadAsync());
        await write;
        channel.ReleaseReservations(1);
        await room;
    }

    [Fact(Timeout = 60_000)]
    public async Task PutReserved_ReservingWriterBesideLocalWriters_EveryValueReadOnceInWriterOrder()
    {
        const int PerWriter = 20_000;
        const int LocalWriters = 3;
        var channel = new Any2OneChannel<long>(new FifoBuffer<long>(8));

        // One "remote" writer streams through reservations (as a home does for a credited
        // writer: reserve, then put), three local writers write as usual.
        Task remote = Task.Run(async () =>
        {
            int credits = 0;
            for (long i = 0; i < PerWriter; i++)
            {
                while (credits == 0)
                {
                    credits = channel.TryReserve(4);
                    if (credits == 0)
                    {
                        await channel.WhenReservableAsync(CancellationToken.None);
                    }
                }

                channel.PutReserved(i);
                credits--;
            }

            // As a writer that leaves: its unused slots go back.
            channel.ReleaseReservations(credits);
        });
        Task[] locals = [.. Enumerable.Range(1, LocalWriters).Select(w => Task.Run(async () =>
        {
            var output = channel.CreateOut();
            for (long i = 0; i < PerWriter; i++)
            {
                await output.WriteAsync(((long)w << 32) | i);
            }
        }))];

        var next = new long[LocalWriters + 1];
        for (int n = 0; n < PerWriter * (LocalWriters + 1); n++)
        {
            long value = await channel.In.ReadAsync();
            int writer = (int)(value >> 32);
            Assert.Equal(next[writer], value & 0xFFFF_FFFF);
            next[writer]++;
        }

        await remote;
        await Task.WhenAll(locals);
        Assert.All(next, count => Assert.Equal(PerWriter, count));
        Assert.Equal(0, channel.ReservedCount);
    }

    /// <summary>A user buffer: the channel cannot know its capacity.</summary>
    private sealed class UnknownCapacityBuffer : IBuffer<int>
    {
        private readonly Queue<int> _items = new();

        public int Count => _items.Count;

        public bool IsFull => _items.Count >= 2;

        public void Put(int item) => _items.Enqueue(item);

        public int Take() => _items.Dequeue();
    }
}
