using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

/// <summary>The reading end of a channel.</summary>
/// <typeparam name="T">The type of the values carried.</typeparam>
/// <remarks>
/// Blocking and async reads may be mixed freely on the same channel, and each meets writers of
/// either kind. Whether several processes may read at once depends on the channel kind: the
/// reading ends of <see cref="One2AnyChannel{T}"/> and <see cref="Any2AnyChannel{T}"/> are shared;
/// the others have exactly one reading process.
/// </remarks>
public interface IChannelIn<T> : IPoisonable
{
    /// <summary>Blocks until a value is available and returns it.</summary>
    /// <returns>The value read.</returns>
    /// <exception cref="PoisonException">The channel is poisoned (and its buffer, if any, is empty).</exception>
    T Read();

    /// <summary>Waits, without holding a thread, until a value is available and returns it.</summary>
    /// <param name="cancellationToken">
    /// Cancels the wait. A cancelled read has taken nothing: the value stays for another reader.
    /// </param>
    /// <returns>The value read.</returns>
    /// <exception cref="PoisonException">The channel is poisoned (and its buffer, if any, is empty).</exception>
    /// <exception cref="System.OperationCanceledException">The read was cancelled before a value was taken.</exception>
    ValueTask<T> ReadAsync(CancellationToken cancellationToken = default);
}
