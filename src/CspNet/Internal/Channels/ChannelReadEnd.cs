using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;

namespace CspNet.Internal;

/// <summary>
/// The reading end of a channel for one process, and its input guard. A selection that chooses
/// it takes the value at once and keeps it in a hand-over slot for the process's next read. The
/// channel object reads through the slot of its own end (<see cref="CspChannel{T}.In"/>) first, so
/// that read may be made on either.
/// </summary>
internal sealed class ChannelReadEnd<T>(CspChannel<T> channel) : AltingChannelIn<T>
{
    /// <summary>
    /// For the channel's own reading end (<see cref="CspChannel{T}.In"/>): the channel's own writing
    /// end, once made. The channel keeps its two ends in one field, and the reading end is the one
    /// every read checks, so the writing end hangs off it.
    /// </summary>
    internal ChannelWriteEnd<T>? Sibling;

    /// <summary>For the channel's own reading end: the channel's waiter cache (see CspChannel.Lazy.cs).</summary>
    internal object? Waiters;

    private HeldValue<T> _held;
    private SelectionWaiter<T>? _node;
    private EndBinding _binding;

    /// <summary>The hand-over slot.</summary>
    internal ref HeldValue<T> Slot => ref _held;

    /// <summary>Whether a selection took a value (or poison) that no read has taken yet.</summary>
    internal bool IsHolding => _held.IsHolding;

    /// <summary>The waiter this end parks while its alternation waits (made on first need).</summary>
    internal SelectionWaiter<T> Node => _node ??= new SelectionWaiter<T>();

    public override T Read()
    {
        // A read of a value a selection took never blocks, so it is allowed anywhere (the usual
        // "select, then read the chosen end"); CspChannel.ReadDirect checks any other read.
        ref HeldValue<T> held = ref Slot;
        if (held.IsHolding && held.TryTake(out T value, out bool poisoned))
        {
            return poisoned ? throw channel.CreatePoisoned() : value;
        }

        return channel.ReadDirect();
    }

    public override ValueTask<T> ReadAsync(CancellationToken cancellationToken = default)
    {
        ref HeldValue<T> held = ref Slot;
        if (held.IsHolding && held.TryTake(out T value, out bool poisoned))
        {
            return poisoned ? ValueTask.FromException<T>(channel.CreatePoisoned()) : new ValueTask<T>(value);
        }

        return channel.ReadDirectAsync(cancellationToken);
    }

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

    protected internal override bool TryCommit(GuardSite site) => channel.TryCommitInput(this, ((GuardSlot)site).Core);

    protected internal override void Enable(GuardSite site) => channel.EnableInput(this, site, ((GuardSlot)site).Core);

    protected internal override void Disable(GuardSite site) => channel.DisableInput(this, ((GuardSlot)site).Core);
}
