using CspNet.Alternation;

namespace CspNet.Tests.Alternation.Contract;

/// <summary>
/// Engine gaps found while proving the guard contract, now fixed. Each test states what the public
/// docs promise; each failed on the engine before the fix, and none was a fault of the guards used.
/// </summary>
public class EngineGapTests
{
    /// <summary>
    /// Gap (fixed): guards that commit asynchronously lose to every synchronous guard, whatever the
    /// order. Alternative's docs: "among n guards each guard that stays ready is chosen at least once
    /// in any n consecutive calls", and Guard's: a guard of your own takes part "with the same
    /// guarantees". Here a remote end and a local end stay ready; the scan commits the local end
    /// every time (TryCommit of a remote end cannot answer without a round trip), so the remote end
    /// is never even enabled and starves. Expected: picks 0, 1, 0, 1, ...; actual: 1, 1, 1, ...
    /// </summary>
    [Fact(Timeout = 20000)]
    public Task FairSelect_RemoteAndLocalEndsAlwaysReady_EachChosenOncePerWindow()
    {
        const int capacity = 50;
        TestSource[] sources = [TestSource.Create(EndKind.Remote, capacity), TestSource.Create(EndKind.Local, capacity)];
        return SelectOrderTests.StressedAltScenario(sources, capacity, asyncSelect: true);
    }

    /// <summary>
    /// Gap (same cause, fixed): "PriSelect chooses the first ready guard in array order". A remote
    /// end that is ready (and knows it) comes first, a ready local end second. Expected 0; actual 1.
    /// With <see cref="Skip"/> in place of the local end, a remote end is never chosen by a poll.
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task PriSelect_ReadyRemoteEndBeforeReadyLocalEnd_ChoosesRemoteEnd()
    {
        (TestSource remote, InputEnd remoteEnd) = TestSource.Open(EndKind.Remote, capacity: 1);
        (TestSource local, InputEnd localEnd) = TestSource.Open(EndKind.Local, capacity: 1);
        await remote.WriteAsync(1);
        await local.WriteAsync(2);
        await TestSource.ReadyKnown(remoteEnd);

        int chosen = await new Alternative(remoteEnd.Guard, localEnd.Guard).PriSelectAsync();
        int polled = new Alternative(remoteEnd.Guard, new Skip()).PriSelect();

        Assert.Equal(0, chosen);
        Assert.Equal(0, polled);
    }

    /// <summary>
    /// Gap (fixed): GuardSite's docs: "Calls made outside the enabled window of the current selection
    /// are harmless: ... TryClaim returns false". A guard keeps its site from one selection (as a
    /// remote end's network thread would) and claims during the next, in which its precondition is
    /// false. Expected: false, and the selection goes on to choose guard 1. Actual: true, and the
    /// selection returns guard 0, whose precondition is false.
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task TryClaim_OutsideEnabledWindow_ReturnsFalseAndSelectionUnaffected()
    {
        (var guard, One2OneChannel<int> channel, var alt) = await GuardWithSiteFromEarlierSelection();
        ValueTask<int> select = alt.PriSelectAsync([false, true]);
        Assert.False(select.IsCompleted);

        bool claimed = guard.Site!.TryClaim();
        guard.Site.WakeAfterClaim();
        ValueTask write = channel.WriteAsync(5);
        int chosen = await select;

        Assert.False(claimed, "A claim through a guard that is not enabled (its precondition is false) succeeded.");
        Assert.Equal(1, chosen);
        Assert.Equal(5, channel.In.Read());
        await write;
    }

    /// <summary>
    /// Gap (fixed): as above for Fail, which the docs say "is ignored" outside the enabled window.
    /// Expected: the selection chooses guard 1 when its writer comes. Actual: it throws the
    /// IOException of a guard it does not consider.
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task Fail_OutsideEnabledWindow_IsIgnored()
    {
        (var guard, One2OneChannel<int> channel, var alt) = await GuardWithSiteFromEarlierSelection();
        ValueTask<int> select = alt.PriSelectAsync([false, true]);
        Assert.False(select.IsCompleted);

        guard.Site!.Fail(new IOException("A stale failure from an earlier selection."));
        ValueTask write = channel.WriteAsync(5);

        Assert.Equal(1, await select);
        Assert.Equal(5, channel.In.Read());
        await write;
    }

    /// <summary>
    /// Gap (fixed): a timeout does not end a reservation in flight. A remote end that knows it is
    /// ready is reserved; the peer does not answer (the reservation waits at a gate, honouring its
    /// token). The timer's 20 ms pass; nothing cancels the reservation, so the selection waits for
    /// the peer, however long: the timeout is only as good as the slowest peer. Expected: the
    /// timer is chosen soon after 20 ms, the item stays at the peer. Actual: nothing happens until
    /// the gate opens, then the remote end is chosen. The blocking PriSelect
    /// behaves alike (it blocks in the reservation).
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_TimeoutPassesWhileReservationInFlight_ChoosesTimer()
    {
        var latency = new GatedLatency();
        var peer = new RemotePeer<int>(1, latency);
        DelayedChannelEnd<int> end = peer.CreateEnd();
        await peer.WriteAsync(1);
        await end.ReadyKnown;
        var timer = new CSTimer();
        timer.RelativeTimeOut(20);

        Task<int> select = new Alternative(end, timer).PriSelectAsync().AsTask();
        await latency.LegWaiting;

        // The peer stays silent until the select has ended: only its timeout can end it.
        int chosen = await select.WaitAsync(TimeSpan.FromSeconds(5));
        latency.Open();

        Assert.Equal(1, chosen);
        Assert.Equal(1, await end.ReadAsync());
    }

    /// <summary>
    /// Gap (fixed): "A reservation is followed by exactly one Confirm or Release". A blocking
    /// PriSelect is interrupted (Thread.Interrupt) while it waits for a reservation; the engine
    /// fails the selection with the interrupt at once (cancelling the token) and abandons the
    /// reservation's task. The
    /// guard then answers true (it had reserved before it saw the token): nobody ever confirms or
    /// releases it, so the reserved item is lost. Expected: one Confirm or one Release. Actual: none.
    /// (The async select waits for the answer and releases it: only the blocking one is affected.)
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task PriSelect_InterruptedDuringReservation_ReservationConfirmedOrReleased()
    {
        var guard = new LateAnswerGuard();
        var alt = new Alternative(guard);
        AltThread<int> selector = AltThread.Start(() => alt.PriSelect());
        await guard.Reserving;
        selector.Thread.Interrupt();
        await guard.TokenFired;
        guard.Answer(reserved: true);

        try
        {
            await selector.Completion;
        }
        catch (ThreadInterruptedException)
        {
        }

        Assert.Equal(1, guard.Confirms + guard.Releases);
    }

    private static async Task<(SiteKeepingGuard Guard, One2OneChannel<int> Channel, Alternative Alt)> GuardWithSiteFromEarlierSelection()
    {
        var guard = new SiteKeepingGuard();
        var channel = new One2OneChannel<int>();
        var alt = new Alternative(guard, channel.In);

        // An earlier selection enables the guard (which keeps its site), then chooses guard 1.
        ValueTask<int> earlier = alt.PriSelectAsync();
        Assert.False(earlier.IsCompleted);
        ValueTask write = channel.WriteAsync(4);
        Assert.Equal(1, await earlier);
        Assert.Equal(4, channel.In.Read());
        await write;
        Assert.NotNull(guard.Site);
        return (guard, channel, alt);
    }

    /// <summary>A guard that is never ready and keeps the site it was last enabled with, as a guard with a network thread would.</summary>
    private sealed class SiteKeepingGuard : Guard
    {
        internal GuardSite? Site { get; private set; }

        protected internal override bool TryCommit(GuardSite site) => false;

        protected internal override void Enable(GuardSite site) => Site = site;
    }

    /// <summary>An asynchronous guard whose reservation answers only when the test says, whatever its token.</summary>
    private sealed class LateAnswerGuard : Guard
    {
        private readonly TaskCompletionSource _reserving = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource<bool> _answer = new();
        private readonly TaskCompletionSource _tokenFired = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _confirms;
        private int _releases;

        internal Task Reserving => _reserving.Task;

        /// <summary>Completes when the engine cancels the reservation's token (it has given up on it).</summary>
        internal Task TokenFired => _tokenFired.Task;

        internal int Confirms => Volatile.Read(ref _confirms);

        internal int Releases => Volatile.Read(ref _releases);

        protected internal override GuardCapabilities Capabilities => GuardCapabilities.CommitsAsynchronously;

        internal void Answer(bool reserved) => _answer.SetResult(reserved);

        protected internal override bool TryCommit(GuardSite site) => false;

        protected internal override void Enable(GuardSite site) => site.Signal();

        protected internal override ValueTask<bool> TryReserveAsync(GuardSite site, CancellationToken cancellationToken)
        {
            cancellationToken.UnsafeRegister(static t => ((TaskCompletionSource)t!).TrySetResult(), _tokenFired);
            _reserving.TrySetResult();
            return new ValueTask<bool>(_answer.Task);
        }

        protected internal override void Confirm(GuardSite site) => Interlocked.Increment(ref _confirms);

        protected internal override void Release(GuardSite site) => Interlocked.Increment(ref _releases);
    }
}
