using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// A write offered by an alternation, parked in a channel's writer queue while the alternation
/// waits. A reader that claims it commits the whole alternation to this guard (so no other guard
/// of it can fire) and takes the value in the same step.
/// </summary>
internal sealed class OfferWaiter<T> : Waiter<T>
{
    private AlternativeCore? _alternative;
    private int _index;
    // 1 when the last claim moved a parked owner and it still has to be woken. The node is
    // reused by the owner's next selection, so a slow partner's Wake may run after a later
    // claim: taking the flag with an exchange makes each claim wake the owner at most once.
    private int _wakeOwner;

    internal void Prepare(AlternativeCore alternative, int index, T value)
    {
        _alternative = alternative;
        _index = index;
        Item = value;
        Error = null;
    }

    internal override bool TryClaim()
    {
        if (!_alternative!.TryClaimByPartner(_index, out bool wasWaiting))
        {
            return false;
        }

        if (wasWaiting)
        {
            Volatile.Write(ref _wakeOwner, 1);
        }

        return true;
    }

    internal override void Wake()
    {
        // Only a parked owner needs waking; one that was still enabling finds out by itself.
        if (Interlocked.Exchange(ref _wakeOwner, 0) == 1)
        {
            _alternative!.WakeOwner();
        }
    }
}
