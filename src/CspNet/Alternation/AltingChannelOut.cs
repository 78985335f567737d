using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

/// <summary>
/// A channel's writing end that can also offer a write as a guard in an <see cref="Alternative"/>
/// (an output guard): the guard is ready when a reader can take the offered value.
/// </summary>
/// <typeparam name="T">The type of the values carried.</typeparam>
/// <remarks>
/// <para>
/// Set the value with <see cref="Offer"/> before each selection. When a selection chooses the
/// guard, the value has been written: a reader has taken it (or the buffer has accepted it), and
/// the offer is used up: the next selection that considers the guard needs a new
/// <see cref="Offer"/>, and throws <see cref="System.InvalidOperationException"/> without one (pass a false
/// precondition when there is nothing to offer). A guard that is not chosen writes nothing and
/// keeps its offer. If the channel is poisoned, the selection that chooses the guard throws
/// <see cref="PoisonException"/>.
/// </para>
/// <para>
/// Both sides of a channel may alternate at once: a process alternating over an input end meets
/// one alternating over an output end of the same channel.
/// </para>
/// <para>
/// An end belongs to one process: get one from <see cref="CspChannel{T}.Out"/> (single-writer
/// channels) or <see cref="CspChannel{T}.CreateOut"/> (one per writing process on shared-writer
/// channels).
/// </para>
/// </remarks>
public abstract class AltingChannelOut<T> : Guard, IChannelOut<T>
{
    /// <summary>
    /// Creates a writing end. The channels' own ends come from the channel; an end defined elsewhere
    /// can still be a guard (the distributed layer's remote ends are): implement the guard contract
    /// described on <see cref="Guard"/>.
    /// </summary>
    protected AltingChannelOut()
    {
    }

    /// <summary>The value the guard offers in the next selection (default when there is no offer).</summary>
    public abstract T? OfferedValue { get; }

    /// <summary>Whether an offer is pending: set by <see cref="Offer"/>, cleared when a selection writes it.</summary>
    public abstract bool HasOffer { get; }

    /// <summary>Sets the value to offer in the next selection and returns this guard.</summary>
    /// <param name="value">The value a reader takes if the guard is chosen.</param>
    /// <returns>This end, for use in a guard array.</returns>
    public abstract AltingChannelOut<T> Offer(T value);

    /// <inheritdoc />
    public abstract void Write(T value);

    /// <inheritdoc />
    public abstract ValueTask WriteAsync(T value, CancellationToken cancellationToken = default);

    /// <inheritdoc />
    public abstract void Poison();
}
