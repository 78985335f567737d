using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// The value a selection took for a reading end, kept for that end's next read (or the poison it
/// met, rethrown by that read). Only the reading process fills it (under the channel lock); the
/// take is atomic so that even a misused end hands the value to exactly one read.
/// </summary>
/// <remarks>
/// A take claims the slot (Taking), reads the value, and only then publishes Empty. Publishing
/// Empty first let a second thread misusing the same end fill the slot again between the two
/// steps: the first thread then read the second value (one value lost, one read twice). While a
/// take is under way the slot still counts as holding, so nothing is put into it.
/// </remarks>
internal struct HeldValue<T>
{
    private const int Empty = 0;
    private const int Value = 1;
    private const int Poison = 2;
    private const int Taking = 3;

    private T? _value;
    private int _state;

    internal bool IsHolding => Volatile.Read(ref _state) != Empty;

    internal void Hold(T value)
    {
        _value = value;
        Volatile.Write(ref _state, Value);
    }

    internal void HoldPoison()
    {
        _value = default;
        Volatile.Write(ref _state, Poison);
    }

    /// <summary>Takes the held value; returns false if nothing was held. <paramref name="poisoned"/> tells that poison was held instead.</summary>
    internal bool TryTake(out T value, out bool poisoned)
    {
        int state = Volatile.Read(ref _state);
        if (state is Empty or Taking || Interlocked.CompareExchange(ref _state, Taking, state) != state)
        {
            // Nothing held, or another read (a misused end) is taking it: this read takes nothing.
            value = default!;
            poisoned = false;
            return false;
        }

        // Between the claim and the read: where a second thread misusing the end once refilled the slot.
        Scheduling.ControlPoint.BeforeStateChange();
        value = _value!;
        _value = default;
        poisoned = state == Poison;
        Volatile.Write(ref _state, Empty);
        return true;
    }
}
