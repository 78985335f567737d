using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

/// <summary>
/// A channel's reading end that can also be a guard in an <see cref="Alternative"/>: the guard
/// is ready when the channel has a value (or is poisoned).
/// </summary>
/// <typeparam name="T">The type of the values carried.</typeparam>
/// <remarks>
/// <para>
/// When a selection chooses this end, the value is taken from the channel at that moment and
/// held in the end, so the following <see cref="Read"/> (or <see cref="ReadAsync"/>) returns it
/// at once, even on a channel whose reading end is shared (One2Any, Any2Any). A guard that is not
/// chosen takes nothing. If the chosen channel is poisoned, the next read throws
/// <see cref="PoisonException"/>.
/// </para>
/// <para>
/// An end belongs to one process: get one from <see cref="CspChannel{T}.In"/> (single-reader
/// channels) or <see cref="CspChannel{T}.CreateIn"/> (one per reading process on shared-reader
/// channels), and create it once, not in a loop.
/// </para>
/// </remarks>
public abstract class AltingChannelIn<T> : Guard, IChannelIn<T>
{
    /// <summary>
    /// Creates a reading end. Derive from this class to build a reading end of another kind that
    /// can still be a guard (the distributed layer's remote ends do): implement the guard contract
    /// described on <see cref="Guard"/>.
    /// </summary>
    protected AltingChannelIn()
    {
    }

    /// <inheritdoc />
    public abstract T Read();

    /// <inheritdoc />
    public abstract ValueTask<T> ReadAsync(CancellationToken cancellationToken = default);

    /// <inheritdoc />
    public abstract void Poison();
}
