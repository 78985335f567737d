using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Internal;

/// <summary>
/// The reading end of a channel for one process. Holds the value taken when a selection chose
/// this end, so that the process's next read returns it.
/// </summary>
internal sealed class ChannelReadEnd<T>(ChannelCore<T> core) : AltingChannelIn<T>
{
    private bool _hasValue;
    private bool _poisoned;
    private T? _value;

    /// <summary>The alternative this end pushes readiness to, and its index there. Guarded by the channel lock.</summary>
    internal AlternativeCore? ActiveAlternative;
    internal int ActiveIndex;
    internal bool IsWatching;

    /// <summary>Whether a selection took a value that the process has not read yet.</summary>
    internal bool IsHolding => _hasValue;

    public override T Read()
    {
        if (_hasValue)
        {
            return TakeHeld();
        }

        return core.Read();
    }

    public override ValueTask<T> ReadAsync(CancellationToken cancellationToken = default)
    {
        if (_hasValue)
        {
            try
            {
                return new ValueTask<T>(TakeHeld());
            }
            catch (PoisonException e)
            {
                return ValueTask.FromException<T>(e);
            }
        }

        return core.ReadAsync(cancellationToken);
    }

    public override void Poison() => core.Poison();

    internal override GuardKind Kind => GuardKind.Pushed;

    internal override void Activate(AlternativeCore alternative, int index) => core.ActivateInput(this, alternative, index);

    internal override bool TryCommit(AlternativeCore alternative, int index) => core.TryCommitInput(this, alternative, index);

    /// <summary>Called under the channel lock when a selection takes a value for this end.</summary>
    internal void Hold(T value)
    {
        _value = value;
        _poisoned = false;
        _hasValue = true;
    }

    /// <summary>Called under the channel lock when a selection chose this end of a poisoned, drained channel.</summary>
    internal void HoldPoison()
    {
        _value = default;
        _poisoned = true;
        _hasValue = true;
    }

    private T TakeHeld()
    {
        T value = _value!;
        bool poisoned = _poisoned;
        _value = default;
        _hasValue = false;
        _poisoned = false;
        if (poisoned)
        {
            throw core.NewPoisonException();
        }

        return value;
    }
}
