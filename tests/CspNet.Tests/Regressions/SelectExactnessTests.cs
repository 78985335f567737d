using CspNet.Tests.Alternation;

namespace CspNet.Tests.Regressions;

/// <summary>
/// Defects found in review: a selection's choice is exact whichever object the process
/// reads from next, misuse is refused instead of hanging, offers are written once, and a selection
/// that can never be ready says so.
/// </summary>
public class SelectExactnessTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(5);

    // Defect 1.
    [Theory(Timeout = 10000)]
    [InlineData(AltKind.One2One)]
    [InlineData(AltKind.Any2One)]
    [InlineData(AltKind.One2Any)]
    [InlineData(AltKind.Any2Any)]
    public async Task Read_OnChannelObjectAfterSelectChoseIn_ReturnsTheChosenValue(AltKind kind)
    {
        CspChannel<int> channel = AltChannels.Create<int>(kind);
        Task writer = Task.Run(async () =>
        {
            await channel.WriteAsync(1);
            await channel.WriteAsync(2);
        });

        Assert.Equal(0, await new Alternative(channel.In).PriSelectAsync().AsTask().WaitAsync(Patience));

        Assert.Equal(1, await channel.ReadAsync().AsTask().WaitAsync(Patience));
        Assert.Equal(2, await channel.ReadAsync().AsTask().WaitAsync(Patience));
        await writer.WaitAsync(Patience);
    }

    // Defect 1, blocking read on the channel object.
    [Fact(Timeout = 10000)]
    public async Task Read_BlockingOnChannelObjectAfterSelect_ReturnsTheChosenValue()
    {
        var channel = new One2OneChannel<int>();
        Task writer = Task.Run(async () =>
        {
            await channel.WriteAsync(1);
            await channel.WriteAsync(2);
        });

        Assert.Equal(0, new Alternative(channel.In).PriSelect());
        Assert.Equal(1, channel.Read());
        Assert.Equal(2, channel.Read());
        await writer.WaitAsync(Patience);
    }

    // Defect 2: two alternatives selecting on one end at once, then poison.
    [Fact(Timeout = 10000)]
    public async Task SelectAsync_TwoAlternativesOnOneEndAtOnce_SecondRefusedAndFirstStillServed()
    {
        var channel = new One2AnyChannel<int>();
        AltingChannelIn<int> shared = channel.In;
        ValueTask<int> first = new Alternative(shared).PriSelectAsync();
        Assert.False(first.IsCompleted);

        var error = await Assert.ThrowsAsync<InvalidOperationException>(
            async () => await new Alternative(shared).PriSelectAsync().AsTask().WaitAsync(Patience));
        Assert.Contains("CreateIn", error.Message, StringComparison.Ordinal);

        channel.Poison();
        Assert.Equal(0, await first.AsTask().WaitAsync(Patience));
        Assert.Throws<PoisonException>(() => shared.Read());
    }

    // Defect 2: a plain read beside a selection on the single reading end of a One2One channel.
    [Fact(Timeout = 10000)]
    public async Task Read_BesideASelectOnTheSingleReadingEnd_RefusedAndChannelStillWorks()
    {
        var channel = new One2OneChannel<int>();
        ValueTask<int> select = new Alternative(channel.In).PriSelectAsync();

        var error = await Assert.ThrowsAsync<InvalidOperationException>(async () => await channel.ReadAsync().AsTask().WaitAsync(Patience));
        Assert.Contains("One2AnyChannel", error.Message, StringComparison.Ordinal);

        await channel.WriteAsync(7).AsTask().WaitAsync(Patience);
        Assert.Equal(0, await select.AsTask().WaitAsync(Patience));
        Assert.Equal(7, channel.In.Read());
    }

    // Defect 3: a chosen offer is not written again.
    [Fact(Timeout = 10000)]
    public async Task PriSelect_OfferChosenThenSelectAgainWithoutOffer_ThrowsAndWritesNothing()
    {
        var channel = new One2OneChannel<int>();
        AltingChannelOut<int> output = channel.Out;
        var alt = new Alternative(output.Offer(5));
        Task<int> reader = channel.ReadAsync().AsTask();
        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(5, await reader.WaitAsync(Patience));

        Task<int> second = channel.ReadAsync().AsTask();
        Assert.Throws<InvalidOperationException>(() => alt.PriSelect());
        Assert.False(second.IsCompleted, "The used offer was written a second time.");

        output.Offer(6);
        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(6, await second.WaitAsync(Patience));
    }

    // Defect 3: no offer at all.
    [Fact]
    public void PriSelect_OutputGuardNeverOffered_ThrowsInsteadOfWritingDefault()
    {
        var channel = new One2OneChannel<string>();
        Task<string> reader = channel.ReadAsync().AsTask();
        var alt = new Alternative(channel.Out, new Skip());

        var error = Assert.Throws<InvalidOperationException>(() => alt.PriSelect());
        Assert.Contains("Offer(value)", error.Message, StringComparison.Ordinal);
        Assert.False(reader.IsCompleted, "An output guard with no offer wrote default(T).");

        // A false precondition leaves the offer-less guard out.
        Assert.Equal(1, alt.PriSelect([false, true]));
    }

    // Defect 5.
    [Fact(Timeout = 10000)]
    public async Task PriSelect_OnlyTimersWithoutTimeout_ThrowsInsteadOfWaitingForever()
    {
        var alt = new Alternative(new CSTimer(), new CSTimer());
        Task<int> blocking = Task.Run(() => alt.PriSelect());
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => blocking.WaitAsync(Patience));
        Assert.Contains("timeout", error.Message, StringComparison.OrdinalIgnoreCase);
        await Assert.ThrowsAsync<InvalidOperationException>(async () => await alt.FairSelectAsync().AsTask().WaitAsync(Patience));

        // Only the enabled guards count: a set timer whose precondition is false does not help.
        var set = new CSTimer();
        set.RelativeTimeOut(0);
        var mixed = new Alternative(new CSTimer(), set);
        Assert.Throws<InvalidOperationException>(() => mixed.PriSelect([true, false]));
        Assert.Equal(1, mixed.PriSelect());
    }

    // Defect 7: a value held by the end is seen by every later selection.
    [Theory(Timeout = 10000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task PriSelect_NewAlternativeOverEndThatHoldsAValue_ChoosesItAtOnce(bool async)
    {
        var channel = new Any2OneChannel<int>();
        var idle = new One2OneChannel<int>();
        Task writer = channel.WriteAsync(4).AsTask();
        Assert.Equal(0, new Alternative(channel.In).PriSelect());
        await writer.WaitAsync(Patience);

        // Nothing is left in the channel, but the end holds 4 for its next read.
        var again = new Alternative(idle.In, channel.In);
        int chosen = async
            ? await again.PriSelectAsync().AsTask().WaitAsync(Patience)
            : await Task.Run(() => again.PriSelect()).WaitAsync(Patience);
        Assert.Equal(1, chosen);
        Assert.Equal(4, channel.In.Read());
    }
}
