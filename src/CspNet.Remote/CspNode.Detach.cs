using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Client;

namespace CspNet.Remote;

// Detaching one end of a channel, barrier or bucket that another program hosts, while this program goes on.
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

    /// <summary>
    /// Resigns a party of a barrier hosted by another program, while this program goes on: the
    /// barrier then waits for one party fewer each time, and this program leaving later is no
    /// longer a lost party (which poisons the barrier).
    /// </summary>
    /// <param name="barrier">A party a getter of this node returned for a barrier hosted by another program (each getter call is one party).</param>
    /// <param name="cancellationToken">Stops waiting for the home to confirm; the party is detached all the same.</param>
    /// <returns>Completes when the party has resigned at the home (or the home is gone, or this node has left).</returns>
    /// <remarks>
    /// Detach a party from the process that syncs on it, between Syncs. A Sync another process still
    /// has waiting on it is withdrawn at the home first (its arrival does not count) and throws
    /// <see cref="ObjectDisposedException"/>, as does every later use of the party. Detaching twice
    /// does nothing more.
    /// </remarks>
    /// <exception cref="ArgumentException">The barrier is hosted by this program (its parties live with it; resign a core <see cref="Barrier"/> instead) or is a local one.</exception>
    public Task DetachAsync(NamedBarrier barrier, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(barrier);
        return Detachable(barrier, $"party of barrier '{barrier.Name}'", nameof(barrier))?.DetachAsync(cancellationToken) ?? Task.CompletedTask;
    }

    /// <summary>
    /// Leaves a bucket hosted by another program, while this program goes on: a Fall still waiting
    /// through this user climbs out of the bucket (a later Flush does not count it), and the user's
    /// place at the home is free.
    /// </summary>
    /// <param name="bucket">A user a getter of this node returned for a bucket hosted by another program.</param>
    /// <param name="cancellationToken">Stops waiting for the home to confirm; the user is detached all the same.</param>
    /// <returns>Completes when the user's place at the home is free (or the home is gone, or this node has left).</returns>
    /// <remarks>
    /// A Fall still waiting throws <see cref="ObjectDisposedException"/>, as does every later use of
    /// the user. A Flush that the home had already done before the detach reached it released the
    /// Fall as usual. Detaching twice does nothing more.
    /// </remarks>
    /// <exception cref="ArgumentException">The bucket is hosted by this program (its users live with it) or is a local one.</exception>
    public Task DetachAsync(NamedBucket bucket, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(bucket);
        return Detachable(bucket, $"user of bucket '{bucket.Name}'", nameof(bucket))?.DetachAsync(cancellationToken) ?? Task.CompletedTask;
    }

    /// <summary>The end to detach; null once this node has left (its links are closed, and every end with them).</summary>
    private IDetachableEnd? Detachable(object end, string? described = null, string parameter = "end")
    {
        ArgumentNullException.ThrowIfNull(end);
        if (Volatile.Read(ref _disposed) != 0)
        {
            return null;
        }

        return end as IDetachableEnd ?? throw new ArgumentException(
            $"The {described ?? end.ToString()} is not hosted by another program: only the ends of channels, barriers and buckets another program hosts detach. The ends of one this program hosts (and of a local one) live as long as it does; stop using them, or poison it to end its other parties.",
            parameter);
    }
}
