using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>Preconditions (boolean guards) and misuse of Alternative.</summary>
public class PreconditionAndMisuseTests
{
    // ---- preconditions -------------------------------------------------------------------

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_ReadyGuardWithFalsePrecondition_NotChosenAndConsumesNothing()
    {
        var ready = new One2OneChannel<int>(new FifoBuffer<int>(1));
        var other = new One2OneChannel<int>();
        await ready.WriteAsync(1);
        var alt = new Alternative(ready.In, other.In);

        ValueTask<int> select = alt.PriSelectAsync([false, true]);
        Assert.False(select.IsCompleted, "The only ready guard is switched off, so the select waits.");
        ValueTask write = other.WriteAsync(2);
        Assert.Equal(1, await select);
        Assert.Equal(2, other.In.Read());
        await write;

        // The switched-off guard took nothing: its value is still in the channel, first in line.
        Assert.Equal(0, alt.PriSelect([true, true]));
        Assert.Equal(1, ready.In.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_ParkedWriterBehindFalsePrecondition_WriterStaysParked()
    {
        var ready = new One2OneChannel<int>();
        ValueTask parked = ready.WriteAsync(5);
        var alt = new Alternative(ready.In, new Skip());

        for (int n = 0; n < 50; n++)
        {
            Assert.Equal(1, alt.PriSelect([false, true]));
            Assert.Equal(1, alt.FairSelect([false, true]));
            Assert.Equal(1, alt.Select([false, true]));
            Assert.Equal(1, await alt.FairSelectAsync([false, true]));
            Assert.Equal(1, await alt.SelectAsync([false, true]));
        }

        Assert.False(parked.IsCompleted, "No value was taken from the writer.");
        Assert.Equal(0, alt.PriSelect([true, true]));
        await parked;
        Assert.Equal(5, ready.In.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_OutputGuardWithFalsePrecondition_WritesNothing()
    {
        var channel = new One2OneChannel<int>();
        ValueTask<int> reader = channel.ReadAsync();
        Assert.False(reader.IsCompleted);
        var alt = new Alternative(channel.Out.Offer(7), new Skip());

        Assert.Equal(1, alt.PriSelect([false, true]));
        Assert.Equal(1, await alt.PriSelectAsync([false, true]));
        Assert.False(reader.IsCompleted, "The switched-off output guard delivered nothing.");

        await channel.WriteAsync(8);
        Assert.Equal(8, await reader);
    }

    [Fact(Timeout = 10000)]
    public async Task FairSelect_Preconditions_OnlyTrueGuardsTakenInTurn()
    {
        const int k = 4;
        var channels = new One2OneChannel<int>[k];
        for (int i = 0; i < k; i++)
        {
            channels[i] = new One2OneChannel<int>(new FifoBuffer<int>(10));
            for (int j = 0; j < 10; j++)
            {
                await channels[i].WriteAsync((i * 100) + j);
            }
        }

        var alt = new Alternative([.. channels.Select(c => (Guard)c.In)]);
        bool[] pre = [true, false, true, false];
        var chosen = new List<int>();
        for (int n = 0; n < 6; n++)
        {
            int i = alt.FairSelect(pre);
            chosen.Add(i);
            Assert.Equal((i * 100) + (n / 2), channels[i].In.Read());
        }

        Assert.Equal([0, 2, 0, 2, 0, 2], chosen);
        Assert.Equal(100, channels[1].In.Read());
        Assert.Equal(300, channels[3].In.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task Select_AllPreconditionsFalse_ThrowsInvalidOperationAndStaysUsable()
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
        await channel.WriteAsync(4);
        var alt = new Alternative(channel.In, new Skip());
        bool[] none = [false, false];

        Assert.Throws<InvalidOperationException>(() => alt.PriSelect(none));
        Assert.Throws<InvalidOperationException>(() => alt.FairSelect(none));
        Assert.Throws<InvalidOperationException>(() => alt.Select(none));
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await alt.PriSelectAsync(none));
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await alt.FairSelectAsync(none));
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await alt.SelectAsync(none));

        // Nothing was consumed and the alternative still works.
        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(4, channel.In.Read());
        Assert.Equal(1, alt.PriSelect());
    }

    [Theory(Timeout = 10000)]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(3)]
    public async Task Select_WrongNumberOfPreconditions_ThrowsArgumentAndStaysUsable(int length)
    {
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
        await channel.WriteAsync(4);
        var alt = new Alternative(channel.In, new Skip());
        bool[] wrong = Enumerable.Repeat(true, length).ToArray();

        Assert.Throws<ArgumentException>(() => alt.PriSelect(wrong));
        Assert.Throws<ArgumentException>(() => alt.FairSelect(wrong));
        Assert.Throws<ArgumentException>(() => alt.Select(wrong));
        await Assert.ThrowsAsync<ArgumentException>(async () => await alt.PriSelectAsync(wrong));
        await Assert.ThrowsAsync<ArgumentException>(async () => await alt.FairSelectAsync(wrong));
        await Assert.ThrowsAsync<ArgumentException>(async () => await alt.SelectAsync(wrong));

        Assert.Equal(0, alt.PriSelect([true, true]));
        Assert.Equal(4, channel.In.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task Select_NullPreconditions_ThrowsArgumentNull()
    {
        var alt = new Alternative(new Skip());
        Assert.Throws<ArgumentNullException>(() => alt.PriSelect(null!));
        Assert.Throws<ArgumentNullException>(() => alt.FairSelect(null!));
        await Assert.ThrowsAsync<ArgumentNullException>(async () => await alt.PriSelectAsync(null!));
        Assert.Equal(0, alt.PriSelect());
    }

    // ---- construction ---------------------------------------------------------------------

    [Fact]
    public void Constructor_NoGuards_ThrowsArgument()
    {
        Assert.Throws<ArgumentException>(() => new Alternative());
        Assert.Throws<ArgumentException>(() => new Alternative(Array.Empty<Guard>()));
    }

    [Fact]
    public void Constructor_NullArray_ThrowsArgument()
    {
        Assert.ThrowsAny<ArgumentException>(() => new Alternative(null!));
    }

    [Fact]
    public void Constructor_NullGuard_ThrowsArgument()
    {
        var channel = new One2OneChannel<int>();
        ArgumentException e = Assert.Throws<ArgumentException>(() => new Alternative(channel.In, null!, new Skip()));
        Assert.Contains("1", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Constructor_DuplicateGuard_ThrowsArgument()
    {
        var channel = new One2OneChannel<int>();
        var timer = new CSTimer();
        var skip = new Skip();
        Assert.Throws<ArgumentException>(() => new Alternative(channel.In, channel.In));
        Assert.Throws<ArgumentException>(() => new Alternative(timer, channel.In, timer));
        Assert.Throws<ArgumentException>(() => new Alternative(skip, skip));
        Assert.Throws<ArgumentException>(() => new Alternative(channel.Out, new Skip(), channel.Out));
    }

    [Fact]
    public void Constructor_DistinctGuardsOfOneChannel_Accepted()
    {
        var channel = new Any2AnyChannel<int>();
        _ = new Alternative(channel.CreateIn(), channel.CreateIn(), channel.CreateOut(), channel.CreateOut(), new Skip(), new Skip());
    }

    [Fact]
    public void Constructor_CallerChangesArrayLater_AlternativeUnaffected()
    {
        var channel = new One2OneChannel<int>();
        var guards = new Guard[] { channel.In, new Skip() };
        var alt = new Alternative(guards);
        guards[1] = channel.In;
        Assert.Equal(1, alt.PriSelect());
    }

    // ---- overlapping selections ---------------------------------------------------------------

    [Fact(Timeout = 10000)]
    public async Task Select_WhileAnotherSelectWaits_ThrowsInvalidOperationAndFirstStillWorks()
    {
        var channel = new One2OneChannel<int>();
        var alt = new Alternative(channel.In, new CSTimer());

        ValueTask<int> first = alt.PriSelectAsync();
        Assert.False(first.IsCompleted);

        Assert.Throws<InvalidOperationException>(() => alt.PriSelect());
        Assert.Throws<InvalidOperationException>(() => alt.FairSelect());
        Assert.Throws<InvalidOperationException>(() => alt.Select([true, true]));
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await alt.PriSelectAsync());
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await alt.FairSelectAsync());
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await alt.SelectAsync());

        ValueTask write = channel.WriteAsync(6);
        Assert.Equal(0, await first);
        Assert.Equal(6, channel.In.Read());
        await write;
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_ThreadAndAsyncSelectOverlap_ExactlyOneRefused()
    {
        var channel = new One2OneChannel<int>();
        var alt = new Alternative(channel.In);

        AltThread<int> selector = AltThread.Start(() => alt.PriSelect());
        selector.WaitUntilBlockedOrEnded();
        ValueTask<int> second = alt.PriSelectAsync();
        if (second.IsFaulted)
        {
            // The thread's select was running: ours was refused; the thread's still completes.
            await Assert.ThrowsAsync<InvalidOperationException>(async () => await second);
            await channel.WriteAsync(2);
            Assert.Equal(0, await selector.Completion);
        }
        else
        {
            // Ours began first (it waits, as nothing is ready): the thread's must be refused.
            Assert.False(second.IsCompleted);
            await Assert.ThrowsAsync<InvalidOperationException>(() => selector.Completion);
            await channel.WriteAsync(2);
            Assert.Equal(0, await second);
        }

        Assert.Equal(2, channel.In.Read());
    }

    // ---- guards shared between alternatives of one process ----------------------------------

    [Fact(Timeout = 10000)]
    public async Task SelectAsync_EndUsedByTwoAlternativesInTurn_EachWakesOnItsChannel()
    {
        var shared = new One2OneChannel<int>();
        var other = new One2OneChannel<int>();
        var x = new Alternative(shared.In, other.In);
        var y = new Alternative(other.In, shared.In);

        for (int round = 0; round < 200; round++)
        {
            Alternative alt = round % 2 == 0 ? x : y;
            int sharedIndex = round % 2 == 0 ? 0 : 1;
            ValueTask<int> select = alt.PriSelectAsync();
            Assert.False(select.IsCompleted);
            bool useShared = round % 3 != 0;
            ValueTask write = useShared ? shared.WriteAsync(round) : other.WriteAsync(round);
            int chosen = await select;
            Assert.Equal(useShared ? sharedIndex : 1 - sharedIndex, chosen);
            Assert.Equal(round, useShared ? shared.In.Read() : other.In.Read());
            await write;
        }
    }
}
