using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;

namespace CspNet.Internal;

/// <summary>The writing end of a channel for one process; as an output guard it writes the value last offered, once.</summary>
internal sealed class ChannelWriteEnd<T>(CspChannel<T> channel) : AltingChannelOut<T>
{
    /// <summary>
    /// For the channel's own writing end, while it has no reading end: the channel's waiter cache
    /// (see CspChannel.Lazy.cs).
    /// </summary>
    internal object? Waiters;

    private SelectionWaiter<T>? _node;
    private EndBinding _binding;
    private T? _value;
    private bool _hasOffer;

    /// <summary>What went wrong with the chosen offer (poison, a buffer's exception); thrown by <see cref="Confirm"/>.</summary>
    internal Exception? Failure;

    /// <summary>The waiter that parks the offer while the alternation waits (made on first need).</summary>
    internal SelectionWaiter<T> Node => _node ??= new SelectionWaiter<T>();

    public override T? OfferedValue => _value;

    public override bool HasOffer => _hasOffer;

    public override AltingChannelOut<T> Offer(T value)
    {
        _value = value;
        _hasOffer = true;
        return this;
    }

    public override void Write(T value) => channel.WriteDirect(value);

    public override ValueTask WriteAsync(T value, CancellationToken cancellationToken = default) => channel.WriteDirectAsync(value, cancellationToken);

    public override void Poison() => channel.PoisonDirect();

    /// <summary>See <see cref="EndBinding"/>.</summary>
    internal void BindLocked(AlternativeCore selection)
    {
        Debug.Assert(Monitor.IsEntered(channel), "Bound under the channel lock.");
        if (!_binding.TryBindLocked(channel, selection))
        {
            ThrowHelper.ThrowEndInOtherSelection(channel.Kind);
        }
    }

    protected internal override bool Prepare(GuardSite site)
    {
        if (!_hasOffer)
        {
            ThrowHelper.ThrowNoOffer(channel.Kind);
        }

        Failure = null;
        return true;
    }

    protected internal override bool TryCommit(GuardSite site) => channel.TryCommitOutput(this, ((GuardSlot)site).Core, _value!);

    protected internal override void Enable(GuardSite site) => channel.EnableOutput(this, site, ((GuardSlot)site).Core, _value!);

    protected internal override void Disable(GuardSite site) => channel.DisableOutput(this, ((GuardSlot)site).Core);

    protected internal override void Confirm(GuardSite site)
    {
        if (Failure is { } failure)
        {
            // Not written: the offer stays, as for a guard that was not chosen.
            Failure = null;
            throw failure;
        }

        // Written: an offer is used exactly once.
        _value = default;
        _hasOffer = false;
    }
}
