using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Client;

namespace CspNet.Remote;

// Detaching one end of a channel that another program hosts, while this program goes on.
public sealed partial class CspNode
{
    /// <summary>
    /// Releases a writing end of a channel hosted by another program, while this program goes on.
    /// Its unused write credits go back to the channel's buffer (other writers can use them), and
    /// its place is free: another program may then take the single writing end of a One2One or
    /// One2Any. The last writer of an Any2One or Any2Any leaving is not a loss: the channel is not
    /// poisoned. Values whose writes completed are placed before the end detaches.
    /// </summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <param name="end">An end a getter of this node returned for a channel hosted by another program.</param>
    /// <param name="cancellationToken">Stops waiting for the home to confirm; the end is detached all the same.</param>
    /// <returns>Completes when the end's place at the home is free (or the home is gone, or this node has left).</returns>
    /// <remarks>
    /// Detach an end from the process that owns it, between operations. An operation another process
    /// still has waiting on the end is cancelled at the home, exactly (nothing is written), and
    /// throws <see cref="ObjectDisposedException"/>, as does every later use of the end; a
    /// selection's offer that the home had set a slot or reader aside for gives it back. Detaching
    /// twice does nothing more.
    /// </remarks>
    /// <exception cref="ArgumentException">The end is not one of a channel hosted by another program (this program hosts the channel, and its ends live with it).</exception>
    public Task DetachAsync<T>(IChannelOut<T> end, CancellationToken cancellationToken = default) =>
        Detachable(end)?.DetachAsync(cancellationToken) ?? Task.CompletedTask;

    /// <summary>
    /// Releases a reading end of a channel hosted by another program (a One2Any or Any2Any reader),
    /// while this program goes on. A value the home holds for the end's selection goes back to the
    /// channel for the other readers; the end's place is free.
    /// </summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <param name="end">An end a getter of this node returned for a channel hosted by another program.</param>
    /// <param name="cancellationToken">Stops waiting for the home to confirm; the end is detached all the same.</param>
    /// <returns>Completes when the end's place at the home is free (or the home is gone, or this node has left).</returns>
    /// <remarks>
    /// Detach an end from the process that owns it, between operations. A read another process still
    /// has waiting on the end is cancelled at the home, exactly (nothing is taken), and throws
    /// <see cref="ObjectDisposedException"/>, as does every later use of the end. Detaching twice
    /// does nothing more.
    /// </remarks>
    /// <exception cref="ArgumentException">The end is not one of a channel hosted by another program (this program hosts the channel, and its ends live with it).</exception>
    /// <exception cref="InvalidOperationException">A selection chose the end and its value is not read yet: read it first, or it would be lost.</exception>
    public Task DetachAsync<T>(IChannelIn<T> end, CancellationToken cancellationToken = default) =>
        Detachable(end)?.DetachAsync(cancellationToken) ?? Task.CompletedTask;

    /// <summary>The end to detach; null once this node has left (its links are closed, and every end with them).</summary>
    private IDetachableEnd? Detachable(object end)
    {
        ArgumentNullException.ThrowIfNull(end);
        if (Volatile.Read(ref _disposed) != 0)
        {
            return null;
        }

        return end as IDetachableEnd ?? throw new ArgumentException(
            $"The {end} is not an end of a channel hosted by another program: only those detach. The ends of a channel this program hosts (and of a local one) live as long as the channel; stop using them, or poison the channel to end its other parties.",
            nameof(end));
    }
}
