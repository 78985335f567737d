using CspNet.Alternation;

namespace CspNet.Tests.Alternation.Contract;

/// <summary>
/// A guard whose capabilities change between scans (Guard.CapabilitiesChange, internal: a channel
/// end whose channel's home moved to another program commits asynchronously from then on): the
/// engine reads them again at every scan, so that a selection waiting on it when they change
/// reserves it in its next scan.
/// </summary>
public class ChangingCapabilitiesTests
{
    [Theory(Timeout = 10000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Select_GuardBecomesAsynchronousWhileEnabled_NextScanReservesIt(bool asyncSelect)
    {
        var guard = new TurningGuard();
        var alternative = new Alternative(guard, new One2OneChannel<int>().In);
        Task<int> selecting = asyncSelect ? alternative.PriSelectAsync().AsTask() : Task.Run(alternative.PriSelect);
        GuardSite site = await guard.Enabled.Task;

        // As a following end does: it now commits asynchronously, and signals while the engine
        // still takes it for a synchronous guard, so that a new scan begins.
        guard.Asynchronous = true;
        site.Signal();

        Assert.Equal(0, await selecting);
        Assert.Equal(1, guard.Reservations);
        Assert.Equal(1, guard.Confirmations);
    }

    [Fact(Timeout = 10000)]
    public async Task Select_GuardStaysSynchronous_SignalRescansAndCommits()
    {
        var guard = new TurningGuard();
        var alternative = new Alternative(guard);
        ValueTask<int> selecting = alternative.PriSelectAsync();
        GuardSite site = await guard.Enabled.Task;

        guard.ReadyNow = true;
        site.Signal();

        Assert.Equal(0, await selecting);
        Assert.Equal(0, guard.Reservations);
    }

    /// <summary>Not ready until told; then commits in a scan (synchronous) or by a reservation (asynchronous).</summary>
    private sealed class TurningGuard : Guard
    {
        internal TaskCompletionSource<GuardSite> Enabled { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        internal volatile bool Asynchronous;
        internal volatile bool ReadyNow;
        internal int Reservations;
        internal int Confirmations;

        internal override bool CapabilitiesChange => true;

        protected internal override GuardCapabilities Capabilities => Asynchronous ? GuardCapabilities.CommitsAsynchronously : GuardCapabilities.None;

        protected internal override bool TryCommit(GuardSite site) => ReadyNow;

        protected internal override void Enable(GuardSite site) => Enabled.TrySetResult(site);

        protected internal override ValueTask<bool> TryReserveAsync(GuardSite site, CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref Reservations);
            return new(true);
        }

        protected internal override void Confirm(GuardSite site) => Interlocked.Increment(ref Confirmations);
    }
}
