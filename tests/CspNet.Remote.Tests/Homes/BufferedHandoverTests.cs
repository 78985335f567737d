using System.Globalization;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Homes;

/// <summary>
/// A program that leaves cleanly while it hosts a buffered Any2Any or a One2Any channel that other
/// programs hold ends of hands the channel's home, with its buffer's values, to one of them
/// (docs/DISTRIBUTED.md, "A moving home"): the writers stop spending credits first, so every value
/// they wrote is placed before the buffer moves, and every value is read exactly once, in order.
/// The homes and writers are separate programs (tests/CspNet.Remote.TestNode).
/// </summary>
public sealed class BufferedHandoverTests
{
    private const int Count = 10_000;
    private static readonly string CountText = Count.ToString(CultureInfo.InvariantCulture);

    [Fact(Timeout = 120_000)]
    public async Task Leave_FifoBufferWhileAWriterStreams_EveryValueOnceInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = await HomeAsync(system, "stream", "fifo", 16);
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("stream");
        ChildNode writer = system.Child("write", "Any2Any", "stream", CountText);

        await ReadInOrderAsync(input, 0, Count / 3);

        // The home leaves while the writer streams credited values into its buffer and the reader reads.
        Task leaving = LeaveAsync(home);
        await ReadInOrderAsync(input, Count / 3, Count);
        await leaving;
        await writer.WaitForAsync($"done wrote {CountText}");
        Assert.Equal(0, await writer.ExitAsync());
    }

    [Theory(Timeout = 120_000)]
    [InlineData("fifo", 16)]
    [InlineData("infinite", 0)]
    public async Task Leave_BufferHoldsTheWriterValues_TheyArriveAtTheNewHomeInOrder(string kind, int slots)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = await HomeAsync(system, "held", kind, slots);
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("held");

        // FifoBuffer(16): the writer stops after 16 values, all in the buffer; InfiniteBuffer: all but the last are.
        int held = kind == "fifo" ? slots : Count - 1;
        ChildNode writer = system.Child("write-pause", "Any2Any", "held", CountText, held.ToString(CultureInfo.InvariantCulture));
        await writer.WaitForAsync("paused");

        await LeaveAsync(home);

        // The values the buffer held come from the new home; only then does the writer go on (and,
        // if it took the home, leave in turn, handing on what is left).
        await ReadInOrderAsync(input, 0, held);
        writer.CloseInput();
        await ReadInOrderAsync(input, held, Count);
        await writer.WaitForAsync($"done wrote {CountText}");
        Assert.Equal(0, await writer.ExitAsync());
    }

    [Theory(Timeout = 120_000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Leave_LargeValuesOnAndOffTheLane_EveryValueOnceInOrder(bool lane)
    {
        const int Total = 600;
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-leave-buffered", "big", "fifo", "16", "bytes");
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<byte[]> input = await node.GetAny2AnyInAsync<byte[]>("big");
        ChildNode writer = lane
            ? system.Child("write-bytes-any", "big", Total.ToString(CultureInfo.InvariantCulture))
            : system.Child("write-bytes-any", "big", Total.ToString(CultureInfo.InvariantCulture), "lane-off");

        for (int i = 0; i < Total / 3; i++)
        {
            Assert.Equal(i, BitConverter.ToInt32(await input.ReadAsync()));
        }

        // The writer fills the buffer (and has values in flight) while the home leaves.
        Task leaving = LeaveAsync(home);
        for (int i = Total / 3; i < Total; i++)
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal(i, BitConverter.ToInt32(value));
            Assert.Equal(i % 2 == 0 ? 40 << 10 : 16, value.Length);
        }

        await leaving;
        await writer.WaitForAsync($"done wrote {Total}");
        Assert.Equal(0, await writer.ExitAsync());
    }

    [Fact(Timeout = 120_000)]
    public async Task Leave_One2AnyWriterProgramLeavesWithValuesBuffered_ReadersReadThemAllThenPoison()
    {
        const int Total = 200;
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("one2any-leave", "fan", Total.ToString(CultureInfo.InvariantCulture));
        await home.ReadyAsync();
        CspNode first = await system.NodeAsync("first");
        CspNode second = await system.NodeAsync("second");
        AltingChannelIn<int> a = await first.GetOne2AnyInAsync<int>("fan");
        AltingChannelIn<int> b = await second.GetOne2AnyInAsync<int>("fan");
        await home.WriteLineAsync("write");
        await home.WaitForAsync("wrote");
        await LeaveAsync(home);

        // Both readers drain the buffer at its new home; then the channel is poisoned: nobody can write.
        Task<List<int>> readingA = ReadUntilPoisonAsync(a);
        Task<List<int>> readingB = ReadUntilPoisonAsync(b);
        List<int> readA = await readingA, readB = await readingB;
        Assert.Equal(Enumerable.Range(0, Total), readA.Concat(readB).Order());
        Assert.Equal(readA.Order(), readA);
        Assert.Equal(readB.Order(), readB);
    }

    [Fact(Timeout = 60_000)]
    public async Task Leave_PoisonedBufferedChannel_MovesPoisonedWithItsValuesReadable()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = await HomeAsync(system, "sick", "fifo", 16);
        CspNode writing = await system.NodeAsync("writer");
        CspNode reading = await system.NodeAsync("reader");
        AltingChannelOut<int> output = await writing.GetAny2AnyOutAsync<int>("sick");
        AltingChannelIn<int> input = await reading.GetAny2AnyInAsync<int>("sick");
        for (int i = 0; i < 5; i++)
        {
            await output.WriteAsync(i);
        }

        output.Poison();
        var poisoned = await Assert.ThrowsAsync<PoisonException>(async () => await output.WriteAsync(5));

        await LeaveAsync(home);

        // As a local buffered channel: the values written before the poison are read, then the poison.
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        var moved = await Assert.ThrowsAsync<PoisonException>(async () => await input.ReadAsync());
        Assert.Contains("poisoned", moved.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("took it over", moved.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 120_000)]
    public async Task Leave_TakerKilledAfterTheMove_ReaderEndsWithPeerLostAndReadEachValueOnce()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = await HomeAsync(system, "fragile", "fifo", 16);
        CspNode node = await system.NodeAsync("reader");
        node.TakesHomes = false; // the writer's program takes the home
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("fragile");
        ChildNode writer = system.Child("write", "Any2Any", "fragile", "1000000");
        int next = 0;
        for (; next < 1_000; next++)
        {
            Assert.Equal(next, await input.ReadAsync());
        }

        await LeaveAsync(home);
        for (int i = 0; i < 1_000; i++, next++)
        {
            Assert.Equal(next, await input.ReadAsync());
        }

        // The new home dies with the program that took it: the reader learns so within the bound,
        // having read every value it got once, in order.
        await writer.KillAsync();
        await Assert.ThrowsAsync<PeerLostException>(async () =>
        {
            for (; ; next++)
            {
                Assert.Equal(next, await input.ReadAsync());
            }
        }).WaitAsync(TimeSpan.FromSeconds(30));
    }

    [Fact(Timeout = 120_000)]
    public async Task Leave_TenThousandValuesToATakerSlowerThanTheBound_EveryValueMovesOnceInOrder()
    {
        const string Name = "slow-taker";

        // A bound of 5 s rather than the suite's 2 s: the home's other bounded waits as it leaves
        // (its held answers sent, then HomeLeft written) must not run out on a loaded machine, or
        // the taker's end would find the home lost instead of moved, which is not what this tests.
        TimeSpan bound = TimeSpan.FromSeconds(5);
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => o.PeerTimeout = bound);
        await home.GetAny2AnyInAsync(Name, new InfiniteBuffer<int>());
        CspNode node = await system.NodeAsync("taker", o => o.PeerTimeout = bound);
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>(Name);
        AltingChannelOut<int> output = await node.GetAny2AnyOutAsync<int>(Name);
        for (int i = 0; i < Count; i++)
        {
            await output.WriteAsync(i);
        }

        // The taker needs twice the bound (PeerTimeout) to receive the buffer, but acknowledges the
        // values as they come: the offer is bounded by its silence, not by its size.
        HandoverValues.SlowTakerForTests[Name] = received =>
        {
            if (received % (Count / 10) == 0)
            {
                Thread.Sleep(bound * 2 / 10);
            }
        };
        try
        {
            await home.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(60));
        }
        finally
        {
            HandoverValues.SlowTakerForTests.TryRemove(Name, out _);
        }

        await ReadInOrderAsync(input, 0, Count);

        // Each value once: the next one read is the one written after the move.
        await output.WriteAsync(Count);
        Assert.Equal(Count, await input.ReadAsync());
    }

    private static async Task ReadInOrderAsync(AltingChannelIn<int> input, int from, int to)
    {
        for (int i = from; i < to; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }
    }

    private static async Task<List<int>> ReadUntilPoisonAsync(AltingChannelIn<int> input)
    {
        List<int> read = [];
        try
        {
            for (; ; )
            {
                read.Add(await input.ReadAsync());
            }
        }
        catch (PoisonException)
        {
            return read;
        }
    }

    /// <summary>A program that hosts the buffered Any2Any channel <paramref name="name"/> and leaves when told (<see cref="LeaveAsync"/>).</summary>
    private static async Task<ChildNode> HomeAsync(TestSystem system, string name, string kind, int slots)
    {
        ChildNode home = system.Child("home-leave-buffered", name, kind, slots.ToString(CultureInfo.InvariantCulture));
        await home.ReadyAsync();
        return home;
    }

    private static Task LeaveAsync(ChildNode home) => HomeHandoverTests.LeaveAsync(home);
}
