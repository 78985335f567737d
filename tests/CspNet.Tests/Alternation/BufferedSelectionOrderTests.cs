using CspNet.Alternation;
using CspNet.Internal;
using CspNet.Tests.Channels;

namespace CspNet.Tests.Alternation;

/// <summary>
/// A single writer's values leave a buffered channel in the order written, whatever mix of
/// offered output guards, selecting readers, reservations, holds, thread and async processes
/// touches it. A selecting reader may stay parked (only signalled) beside values an enabling
/// alternation, a reservation or a released hold put in the buffer; a later value must queue
/// behind them rather than go straight to that reader.
/// </summary>
[Collection(ChannelStressGroup.Name)]
public sealed class BufferedSelectionOrderTests
{
    private const int TimeoutMilliseconds = 120_000;

    // ---- the path itself, step by step ----------------------------------------------------------

    [Fact(Timeout = 20_000)]
    public async Task PriSelectAsync_OfferWhileSelectingReaderParkedBesideBufferedValue_ReaderGetsOldestFirst()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
        using var reader = SignalledReader.Park(channel, channel.In, capacity: 1, firstValue: 1);

        // The buffer is full; the reader's waiter is still parked and claimable.
        Task<int> second = new Alternative(channel.Out.Offer(2)).PriSelectAsync().AsTask();
        reader.Withdraw();

        Assert.Equal(1, await reader.Selection);
        Assert.Equal(1, await channel.In.ReadAsync());
        Assert.Equal(0, await second);
        Assert.Equal(2, await channel.ReadAsync());
    }

    [Fact(Timeout = 20_000)]
    public async Task PutReserved_SelectingReaderParkedBesideBufferedValue_ReservedValueQueuesBehind()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(2));
        using var reader = SignalledReader.Park(channel, channel.In, capacity: 2, firstValue: 1);

        Assert.Equal(1, channel.TryReserve(1));
        channel.PutReserved(2);
        reader.Withdraw();

        Assert.Equal(1, await reader.Selection);
        Assert.Equal(1, await channel.In.ReadAsync());
        Assert.Equal(2, await channel.ReadAsync());
    }

    [Fact(Timeout = 20_000)]
    public async Task Release_SelectingReaderParkedWhileBufferedValueHeld_ReleasedValueComesFirst()
    {
        var channel = new One2AnyChannel<int>(new FifoBuffer<int>(3));
        AltingChannelIn<int> end = channel.CreateIn();
        for (int i = 1; i <= 3; i++)
        {
            await channel.WriteAsync(i);
        }

        ChannelHold<int> hold = channel.TryHold()!;

        // Values 2 and 3 are buffered, but nothing behind the held 1 may be taken: the selection parks.
        Task<int> selection = new Alternative(end).PriSelectAsync().AsTask();
        channel.Release(hold);

        Assert.Equal(0, await selection);
        Assert.Equal(1, await end.ReadAsync());
        Assert.Equal(2, await end.ReadAsync());
        Assert.Equal(3, await end.ReadAsync());
    }

    // ---- the shapes first seen, and the smallest trigger -----------------------------------------

    /// <summary>
    /// The smallest trigger: a writer offering each value in a fair selection beside an idle
    /// offer, and a reader selecting fairly over an idle input and the channel, then reading.
    /// </summary>
    [Theory(Timeout = TimeoutMilliseconds)]
    [InlineData(ChannelKind.One2One, 1, false, false)]
    [InlineData(ChannelKind.One2One, 1, false, true)]
    [InlineData(ChannelKind.One2One, 1, true, false)]
    [InlineData(ChannelKind.One2One, 1, true, true)]
    [InlineData(ChannelKind.One2One, 2, false, false)]
    [InlineData(ChannelKind.Any2Any, 16, false, false)]
    public async Task FairSelect_OfferingWriterSelectingReader_ValuesArriveInOrder(ChannelKind kind, int capacity, bool writerAsync, bool readerAsync) =>
        await AssertInOrderAsync(kind, capacity, [writerAsync], [readerAsync], 100_000, WriteStyles.Offer, ReadStyles.Select);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task FairSelectAsync_AsyncOfferingWriterThreadSelectingReaderFifo3_ValuesArriveInOrder() =>
        await AssertInOrderAsync(ChannelKind.One2One, 3, [true], [false], 100_000, WriteStyles.Offer, ReadStyles.Select);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task PriSelectAsync_ThreadOfferingWriterAsyncSelectingReaderAny2One3_ValuesArriveInOrder() =>
        await AssertInOrderAsync(ChannelKind.Any2One, 3, [false], [true], 100_000, WriteStyles.Offer, ReadStyles.SelectWithTimer);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task PriSelect_OfferWithTimerFourSelectingReadersOne2Any2_EachReaderSeesValuesInOrder() =>
        await AssertInOrderAsync(
            ChannelKind.One2Any, 2, [false], [false, false, true, true], 50_000, WriteStyles.OfferWithTimer, ReadStyles.SelectWithTimer);

    // ---- every kind, capacity and process kind, every way of writing and reading -----------------

    public static TheoryData<ChannelKind, int> KindsAndCapacities()
    {
        var data = new TheoryData<ChannelKind, int>();
        foreach (ChannelKind kind in Enum.GetValues<ChannelKind>())
        {
            for (int capacity = 1; capacity <= 4; capacity++)
            {
                data.Add(kind, capacity);
            }
        }

        return data;
    }

    /// <summary>
    /// Per kind and capacity, every pairing of thread and async writers and readers, each picking
    /// at random for every value among plain writes, offers (beside an idle offer or a timer) and
    /// reservations, and among plain reads, selections (beside an idle input or a timer) and holds.
    /// </summary>
    [Theory(Timeout = TimeoutMilliseconds)]
    [MemberData(nameof(KindsAndCapacities))]
    public async Task Exchange_EveryStyleThreadAndAsync_EachWritersValuesArriveOnceInOrder(ChannelKind kind, int capacity)
    {
        int writers = TestChannels.SharedWriter(kind) ? 2 : 1;
        int readers = TestChannels.SharedReader(kind) ? 2 : 1;
        ReadStyles reads = ReadStyles.Plain | ReadStyles.Select | ReadStyles.SelectWithTimer | (readers == 1 ? ReadStyles.Hold : 0);
        foreach ((bool writerAsync, bool readerAsync) in new[] { (false, false), (false, true), (true, false), (true, true) })
        {
            await AssertInOrderAsync(
                kind,
                capacity,
                [.. Enumerable.Range(0, writers).Select(w => writerAsync ^ (w == 1))],
                [.. Enumerable.Range(0, readers).Select(r => readerAsync ^ (r == 1))],
                3_000,
                WriteStyles.Plain | WriteStyles.Offer | WriteStyles.OfferWithTimer | WriteStyles.Reserve,
                reads,
                seed: (int)kind * 100 + capacity);
        }
    }

    private static async Task AssertInOrderAsync(
        ChannelKind kind, int capacity, bool[] writerAsync, bool[] readerAsync, int perWriter, WriteStyles writes, ReadStyles reads, int seed = 1)
    {
        var exchange = new OrderedExchange(TestChannels.Create(kind, new FifoBuffer<int>(capacity)), writerAsync, readerAsync, perWriter, writes, reads, seed);

        await exchange.RunAsync();

        Assert.Null(exchange.Failure());
    }

    /// <summary>
    /// An async selection over (a gate, the channel's input) parked while the buffer was empty,
    /// then signalled by an enabling offer that put <c>firstValue</c> in the buffer. It stays
    /// parked, its waiter claimable, until <see cref="Withdraw"/> lets it withdraw and scan again.
    /// </summary>
    private sealed class SignalledReader : IDisposable
    {
        private readonly ManualResetEventSlim _gate = new();

        private SignalledReader()
        {
        }

        internal Task<int> Selection { get; private set; } = Task.FromResult(-1);

        internal static SignalledReader Park(CspChannel<int> channel, AltingChannelIn<int> end, int capacity, int firstValue)
        {
            var reader = new SignalledReader();
            var readerSelection = new Alternative(new StepGuard(onDisable: () => Assert.True(reader._gate.Wait(TimeSpan.FromSeconds(15)))), end);
            for (int v = -capacity; v < 0; v++)
            {
                Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(v)));
            }

            // The buffer is full, so the writer's scan finds no room. Between that scan and its
            // enable, the reader empties the buffer and parks its selection; the enable then puts
            // the offer in the buffer and can only signal that reader, which stays parked.
            void DrainAndPark()
            {
                for (int v = -capacity; v < 0; v++)
                {
                    Assert.Equal(1, readerSelection.PriSelectAsync().AsTask().GetAwaiter().GetResult());
                    Assert.Equal(v, end.Read());
                }

                reader.Selection = readerSelection.PriSelectAsync().AsTask();
            }

            var writerSelection = new Alternative(new StepGuard(onEnable: DrainAndPark), channel.Out.Offer(firstValue));
            Assert.Equal(1, writerSelection.PriSelectAsync().AsTask().GetAwaiter().GetResult());
            Assert.False(reader.Selection.IsCompleted, reader.Selection.Status.ToString());
            return reader;
        }

        internal void Withdraw() => _gate.Set();

        public void Dispose()
        {
            _gate.Set();
            _gate.Dispose();
        }
    }

    /// <summary>A guard that is never ready and runs a step when enabled or disabled.</summary>
    private sealed class StepGuard(Action? onEnable = null, Action? onDisable = null) : Guard
    {
        protected internal override bool TryCommit(GuardSite site) => false;

        protected internal override void Enable(GuardSite site) => onEnable?.Invoke();

        protected internal override void Disable(GuardSite site) => onDisable?.Invoke();
    }
}
