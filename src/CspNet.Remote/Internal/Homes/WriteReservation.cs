using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// The home side of a remote output guard's reservation (link.proto, Deliver): a reader or a buffer
/// slot set aside for one offer, until the writer's selection decides. The value comes only if the
/// selection chose the offer, in a Deliver frame, and is placed at once by the stream's read loop,
/// so that it reaches the channel before anything the writer sent after it.
/// </summary>
/// <remarks>
/// Deliver, a Settle that declines, a Detach and the end of the stream all come from the read loop,
/// one at a time, so the first of them decides; the reservation's task then puts back what it set
/// aside unless the value was placed.
/// </remarks>
internal sealed class WriteReservation
{
    private readonly TaskCompletionSource<bool> _settled = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private Func<ReadOnlySequence<byte>, bool, bool>? _place;

    /// <summary>True once the value was placed; false if the reservation was declined or abandoned.</summary>
    internal Task<bool> Settled => _settled.Task;

    /// <summary>Something is set aside: <paramref name="place"/> puts the value there (a value and whether it is too large; false if it could not be placed).</summary>
    internal void SetAside(Func<ReadOnlySequence<byte>, bool, bool> place) => Volatile.Write(ref _place, place);

    /// <summary>
    /// The writer's value came: placed now. False if nothing is set aside for it (a Deliver out of
    /// place: the reservation goes on as declined).
    /// </summary>
    internal bool Deliver(ReadOnlySequence<byte> value, bool tooLarge)
    {
        if (_settled.Task.IsCompleted || Volatile.Read(ref _place) is not { } place)
        {
            _settled.TrySetResult(false);
            return false;
        }

        // The place function handles a value it cannot place (it poisons the channel, saying why):
        // either way the reservation is used.
        place(value, tooLarge);
        _settled.TrySetResult(true);
        return true;
    }

    /// <summary>The writer's selection did not choose the offer, or the stream or end is gone: what was set aside goes back.</summary>
    internal void Decline() => _settled.TrySetResult(false);
}
