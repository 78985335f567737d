using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>A selection that ends with an exception leaves nothing behind and the alternative usable.</summary>
public class AltAbandonTests
{
    [Fact(Timeout = 10000)]
    public async Task PriSelect_EnableFailsOnMisusedOneEnd_EarlierOfferWithdrawnAndAlternativeUsable()
    {
        var shared = new Any2OneChannel<int>();
        var single = new One2OneChannel<int>();

        // A second writer already parked on the One2One channel: offering there is misuse.
        ValueTask intruder = single.WriteAsync(99);
        Assert.False(intruder.IsCompleted);
        var alt = new Alternative(shared.CreateOut().Offer(1), single.Out.Offer(2));

        Assert.Throws<InvalidOperationException>(() => alt.PriSelect());

        // The offer on the shared channel, parked before the failure, was withdrawn.
        ValueTask<int> read = shared.ReadAsync();
        Assert.False(read.IsCompleted, "The failed select delivered nothing.");

        // And the alternative works again.
        Assert.Equal(0, alt.PriSelect([true, false]));
        Assert.Equal(1, await read);
        Assert.Equal(99, await single.ReadAsync());
        await intruder;
    }

    /// <summary>
    /// A thread interrupted (Thread.Interrupt) while its select waits gets
    /// ThreadInterruptedException. The select has then not happened: its parked offer must be
    /// withdrawn (no reader may take the value afterwards) and the alternative must be usable
    /// again.
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task PriSelect_ThreadInterruptedWhileOfferParked_OfferWithdrawnAndAlternativeUsable()
    {
        var channel = new One2OneChannel<int>();
        var alt = new Alternative(channel.Out.Offer(1));

        AltThread<int> selector = AltThread.Start(() => alt.PriSelect());
        selector.WaitUntilBlockedOrEnded();
        selector.Thread.Interrupt();
        await Assert.ThrowsAsync<ThreadInterruptedException>(() => selector.Completion);

        Task<int> read = channel.ReadAsync().AsTask();
        Assert.False(read.IsCompleted, $"The interrupted select's offer was still parked: a later reader took {(read.IsCompletedSuccessfully ? await read : -1)}.");

        channel.Out.Offer(2);
        ValueTask<int> again = alt.PriSelectAsync();
        Assert.Equal(2, await read);
        Assert.Equal(0, await again);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelect_ThreadInterruptedWhileWaitingOnInput_AlternativeUsable()
    {
        var channel = new One2OneChannel<int>();
        var alt = new Alternative(channel.In);

        AltThread<int> selector = AltThread.Start(() => alt.PriSelect());
        selector.WaitUntilBlockedOrEnded();
        selector.Thread.Interrupt();
        await Assert.ThrowsAsync<ThreadInterruptedException>(() => selector.Completion);

        // The next select must be accepted (not refused as "already selecting").
        Task<int> again = alt.PriSelectAsync().AsTask();
        if (again.IsFaulted)
        {
            await again;
        }

        await channel.WriteAsync(3);
        Assert.Equal(0, await again);
        Assert.Equal(3, channel.In.Read());
    }
}
