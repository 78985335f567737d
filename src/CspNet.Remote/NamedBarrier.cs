using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

/// <summary>
/// A barrier found by name, whose parties may be in several programs. A party that calls
/// <see cref="Sync"/> waits until every enrolled party (the count given by the program that
/// created it) has synchronised.
/// </summary>
/// <remarks>
/// Get one with <c>Factory.GetBarrier(name, enrolled)</c> (creates it; this program hosts it) or
/// <c>Factory.GetBarrier(name)</c> (joins it, waiting for it to exist). Thread-safe. In a stand-alone
/// program it is an ordinary local barrier. A party's program that vanishes poisons the barrier:
/// the others would otherwise wait forever.
/// </remarks>
public abstract class NamedBarrier : IPoisonable
{
    private protected NamedBarrier(string name) => Name = name;

    /// <summary>The barrier's name.</summary>
    public string Name { get; }

    /// <summary>Waits until every enrolled party has synchronised.</summary>
    /// <exception cref="PoisonException">The barrier was poisoned, or its home program was lost.</exception>
    public abstract void Sync();

    /// <summary>Waits, without holding a thread, until every enrolled party has synchronised.</summary>
    /// <param name="cancellationToken">Withdraws this arrival; a cancelled arrival is not counted.</param>
    /// <returns>A task that completes when the barrier opens.</returns>
    public abstract ValueTask SyncAsync(CancellationToken cancellationToken = default);

    /// <inheritdoc />
    public abstract void Poison();
}

/// <summary>
/// A bucket found by name, used from several programs: processes that <see cref="Fall"/> wait
/// until someone calls <see cref="Flush"/>.
/// </summary>
/// <remarks>
/// Get one with <c>Factory.GetBucket(name)</c>: the first program to ask hosts it, later ones join.
/// Thread-safe. In a stand-alone program it is an ordinary local bucket.
/// </remarks>
public abstract class NamedBucket : IPoisonable
{
    private protected NamedBucket(string name) => Name = name;

    /// <summary>The bucket's name.</summary>
    public string Name { get; }

    /// <summary>Waits until the bucket is flushed.</summary>
    /// <exception cref="PoisonException">The bucket was poisoned, or its home program was lost.</exception>
    public abstract void Fall();

    /// <summary>Waits, without holding a thread, until the bucket is flushed.</summary>
    /// <param name="cancellationToken">Climbs out of the bucket; a cancelled fall is not released by a later flush.</param>
    /// <returns>A task that completes when the bucket is flushed.</returns>
    public abstract ValueTask FallAsync(CancellationToken cancellationToken = default);

    /// <summary>Releases every process in the bucket.</summary>
    /// <returns>How many processes were released.</returns>
    public abstract int Flush();

    /// <summary>Releases every process in the bucket, without holding a thread while a remote home answers.</summary>
    /// <param name="cancellationToken">Gives up waiting for the answer; the flush may still happen.</param>
    /// <returns>How many processes were released.</returns>
    public abstract ValueTask<int> FlushAsync(CancellationToken cancellationToken = default);

    /// <inheritdoc />
    public abstract void Poison();
}
