using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;

namespace CspNet.Internal;

/// <summary>
/// The reading end of a channel for one process, and its input guard. A selection that chooses
/// it takes the value at once and keeps it in a hand-over slot for the process's next read. The
/// channel's own end (<see cref="CspChannel{T}.In"/>) shares its slot with the channel object, so
/// that read may be made on either; an end from <see cref="CspChannel{T}.CreateIn"/> has its own.
/// </summary>
internal sealed class ChannelReadEnd<T>(ChannelCore<T> core, bool sharesChannelSlot) : AltingChannelIn<T>
{
    private HeldValue<T> _held;
    private SelectionWaiter<T>? _node;
    private SelectionActivity? _lastSelection;

    /// <summary>The hand-over slot: the channel's for its own end, else this end's.</summary>
    internal ref HeldValue<T> Slot => ref sharesChannelSlot ? ref core.Held : ref _held;

    /// <summary>The waiter this end parks while its alternation waits (made on first need).</summary>
    internal SelectionWaiter<T> Node => _node ??= new SelectionWaiter<T>();

    public override T Read()
    {
        ref HeldValue<T> held = ref Slot;
        if (held.IsHolding && held.TryTake(out T value, out bool poisoned))
        {
            return poisoned ? throw ThrowHelper.CreatePoisoned(core.Kind) : value;
        }

        return core.Read();
    }

    public override ValueTask<T> ReadAsync(CancellationToken cancellationToken = default)
    {
        ref HeldValue<T> held = ref Slot;
        if (held.IsHolding && held.TryTake(out T value, out bool poisoned))
        {
            return poisoned ? ValueTask.FromException<T>(ThrowHelper.CreatePoisoned(core.Kind)) : new ValueTask<T>(value);
        }

        return core.ReadAsync(cancellationToken);
    }

    public override void Poison() => core.Poison();

    /// <summary>
    /// Records, under the channel lock, which alternation uses the end; a second alternation that
    /// is selecting at the same time is a misuse (two processes on one end) and is refused.
    /// </summary>
    internal void BindLocked(AlternativeCore selection)
    {
        SelectionActivity activity = selection.Activity;
        if (_lastSelection is { } other && other != activity && other.IsActive)
        {
            ThrowHelper.ThrowEndInOtherSelection(core.Kind);
        }

        _lastSelection = activity;
    }

    protected internal override bool TryCommit(GuardSite site) => core.TryCommitInput(this, ((GuardSlot)site).Core);

    protected internal override void Enable(GuardSite site) => core.EnableInput(this, site, ((GuardSlot)site).Core);

    protected internal override void Disable(GuardSite site) => core.DisableInput(this);
}
