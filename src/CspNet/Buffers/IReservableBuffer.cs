namespace CspNet;

/// <summary>
/// A buffer whose room a channel can reserve ahead of the values (the write credits of the
/// distributed layer, see docs/DISTRIBUTED.md): it says how many values it holds before writers
/// must wait. A buffer without this interface (a user-written <see cref="IBuffer{T}"/>) has a
/// capacity the channel cannot know, so nothing is reserved on it.
/// </summary>
internal interface IReservableBuffer
{
    /// <summary>
    /// How many values the buffer holds before writers must wait; <see cref="int.MaxValue"/> for a
    /// buffer that never makes them wait (reservations then never fill it).
    /// </summary>
    int ReservableCapacity { get; }
}
