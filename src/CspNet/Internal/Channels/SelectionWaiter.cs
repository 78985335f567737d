using System;
using System.Threading;
using CspNet.Alternation;

namespace CspNet.Internal;

/// <summary>
/// A waiter an alternation parks in a channel while it waits: a read (for an input guard) or an
/// offered write (for an output guard). A partner that claims it commits the whole alternation
/// to that guard through the guard contract (<see cref="GuardSite.TryClaim"/>), so no other guard
/// of the alternation can fire, and hands over the value in the same critical section.
/// </summary>
/// <remarks>
/// One node per channel end, reused by every selection of that end; the end arms it
/// (<see cref="Arm"/>) before queueing it and disarms it once withdrawn.
/// </remarks>
internal sealed class SelectionWaiter<T> : Waiter<T>
{
    internal override Exception? Error { get; set; }

    private GuardSite? _site;
    private object? _selection;

    /// <summary>The alternation the node is armed for, or null when idle.</summary>
    internal override object? Selection => _selection;

    /// <summary>Prepares the node for one wait of <paramref name="site"/>'s alternation.</summary>
    internal void Arm(GuardSite site, object selection, T? value)
    {
        ResetState();
        _site = site;
        _selection = selection;
        Item = value;
    }

    /// <summary>Forgets the alternation after it has withdrawn the node (the node is no longer queued).</summary>
    internal void Disarm()
    {
        _selection = null;
        _site = null;
        Item = default;
        Error = null;
    }

    /// <summary>Whether a partner claimed the node during the last wait.</summary>
    internal bool WasClaimed => State == Claimed;

    internal override bool TryClaim() => _site!.TryClaim() && base.TryClaim();

    // Read once: the owner may disarm the node as soon as it learns of the claim by itself.
    internal override void Wake() => Volatile.Read(ref _site)?.WakeAfterClaim();

    internal override void SignalSelection() => _site?.Signal();
}
