using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;

namespace CspNet.Internal;

/// <summary>The writing end of a channel for one process; as an output guard it writes the value last offered, once.</summary>
internal sealed class ChannelWriteEnd<T>(ChannelCore<T> core) : AltingChannelOut<T>
{
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

    public override void Write(T value) => core.Write(value);

    public override ValueTask WriteAsync(T value, CancellationToken cancellationToken = default) => core.WriteAsync(value, cancellationToken);

    public override void Poison() => core.Poison();

    /// <summary>See <see cref="EndBinding"/>.</summary>
    internal void BindLocked(AlternativeCore selection)
    {
        if (!_binding.TryBindLocked(selection))
        {
            ThrowHelper.ThrowEndInOtherSelection(core.Kind);
        }
    }

    protected internal override bool Prepare(GuardSite site)
    {
        if (!_hasOffer)
        {
            ThrowHelper.ThrowNoOffer(core.Kind);
        }

        Failure = null;
        return true;
    }

    protected internal override bool TryCommit(GuardSite site) => core.TryCommitOutput(this, ((GuardSlot)site).Core, _value!);

    protected internal override void Enable(GuardSite site) => core.EnableOutput(this, site, ((GuardSlot)site).Core, _value!);

    protected internal override void Disable(GuardSite site) => core.DisableOutput(this, ((GuardSlot)site).Core);

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
