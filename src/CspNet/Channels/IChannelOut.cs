using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

/// <summary>The writing end of a channel.</summary>
/// <typeparam name="T">The type of the values carried.</typeparam>
/// <remarks>
/// On an unbuffered channel a write completes only after a reader has taken the value (a
/// rendezvous); on a buffered one, once the value is in the buffer. Whether several processes may
/// write at once depends on the channel kind: the writing ends of <see cref="Any2OneChannel{T}"/>
/// and <see cref="Any2AnyChannel{T}"/> are shared; the others have exactly one writing process.
/// </remarks>
public interface IChannelOut<T> : IPoisonable
{
    /// <summary>Blocks until a reader has taken <paramref name="value"/> (or the buffer has accepted it).</summary>
    /// <param name="value">The value to send.</param>
    /// <exception cref="PoisonException">The channel is poisoned; the value was not delivered.</exception>
    void Write(T value);

    /// <summary>
    /// Completes, without holding a thread while it waits, when a reader has taken
    /// <paramref name="value"/> (or the buffer has accepted it).
    /// </summary>
    /// <param name="value">The value to send.</param>
    /// <param name="cancellationToken">
    /// Cancels the wait. A cancelled write delivered nothing: no reader will ever see the value.
    /// </param>
    /// <returns>A task that completes when the value has been delivered.</returns>
    /// <exception cref="PoisonException">The channel is poisoned; the value was not delivered.</exception>
    /// <exception cref="System.OperationCanceledException">The write was cancelled before the value was taken.</exception>
    ValueTask WriteAsync(T value, CancellationToken cancellationToken = default);
}
