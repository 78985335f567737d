using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// The value a selection took for a reading end, kept for that end's next read (or the poison it
/// met, rethrown by that read). Only the reading process fills it; the take is atomic so that even
/// a misused end hands the value to exactly one read.
/// </summary>
internal struct HeldValue<T>
{
    private const int Empty = 0;
    private const int Value = 1;
    private const int Poison = 2;

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
        int state = Interlocked.Exchange(ref _state, Empty);
        if (state == Empty)
        {
            value = default!;
            poisoned = false;
            return false;
        }

        value = _value!;
        _value = default;
        poisoned = state == Poison;
        return true;
    }
}
