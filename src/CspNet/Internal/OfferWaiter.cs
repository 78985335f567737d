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
    private bool _wakeOwner;

    internal void Prepare(AlternativeCore alternative, int index, T value)
    {
        _alternative = alternative;
        _index = index;
        _wakeOwner = false;
        Item = value;
        Error = null;
    }

    internal override bool TryClaim() => _alternative!.TryClaimByPartner(_index, out _wakeOwner);

    internal override void Wake()
    {
        // Only a parked owner needs waking; one that was still enabling finds out by itself.
        if (_wakeOwner)
        {
            _alternative!.WakeOwner();
        }
    }
}
