using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Internal;

/// <summary>The writing end of a channel for one process; as a guard it offers <see cref="OfferedValue"/>.</summary>
internal sealed class ChannelWriteEnd<T>(ChannelCore<T> core) : AltingChannelOut<T>, IOutputGuard
{
    private readonly OfferWaiter<T> _offer = new();
    private T? _value;
    private PoisonException? _failure;

    public override T? OfferedValue => _value;

    public override AltingChannelOut<T> Offer(T value)
    {
        _value = value;
        return this;
    }

    public override void Write(T value) => core.Write(value);

    public override ValueTask WriteAsync(T value, CancellationToken cancellationToken = default) => core.WriteAsync(value, cancellationToken);

    public override void Poison() => core.Poison();

    internal override GuardKind Kind => GuardKind.Checked;

    internal OfferWaiter<T> OfferNode => _offer;

    internal override bool TryCommit(AlternativeCore alternative, int index)
    {
        return core.TryCommitOutput(_value!, out _failure);
    }

    internal override EnableResult Enable(AlternativeCore alternative, int index)
    {
        return core.EnableOutput(this, alternative, index, _value!, out _failure);
    }

    internal override void Disable(AlternativeCore alternative, int index)
    {
        // A reader that claimed the offer before we withdrew it took the value (or, on poison,
        // left an error): both are visible once RemoveOffer has taken the channel lock.
        core.RemoveOffer(_offer);
        _failure ??= _offer.Error as PoisonException;
        _offer.Error = null;
    }

    public void ThrowIfFailed()
    {
        if (_failure is { } failure)
        {
            _failure = null;
            throw failure;
        }
    }
}
