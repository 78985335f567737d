using System;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Collectives;

/// <summary>
/// Gather: workers in any programs send their results, each with the index of the work it answers
/// (<see cref="Indexed{T}"/>), to one reader, which can take them as they come or in index order.
/// </summary>
/// <remarks>
/// The gather is a named Any2One channel of <see cref="Indexed{T}"/>, hosted by the reader's program:
/// a worker's write completes when the reader has taken the result (or the buffer holds it), and a
/// lost worker's program takes nothing already written with it.
/// </remarks>
public static class NamedGather
{
    /// <summary>Creates the gather <paramref name="name"/>, hosted by <paramref name="node"/>'s program.</summary>
    /// <typeparam name="T">The type of the results.</typeparam>
    /// <param name="node">The reader's program.</param>
    /// <param name="name">The gather's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: each worker's write waits for the reader).</param>
    /// <param name="cancellationToken">Stops waiting for the NameServer.</param>
    /// <returns>The reader.</returns>
    public static async ValueTask<GatherReader<T>> CreateAsync<T>(CspNode node, string name, IBuffer<Indexed<T>>? buffer = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(node);
        NamedScatter.RegisterCodec<T>(node);
        return new GatherReader<T>(name, await node.GetAny2OneInAsync(name, buffer, cancellationToken: cancellationToken).ConfigureAwait(false));
    }

    /// <summary>Joins the gather <paramref name="name"/> as a worker, waiting until it exists.</summary>
    /// <typeparam name="T">The type of the results, the reader's.</typeparam>
    /// <param name="node">The worker's program.</param>
    /// <param name="name">The gather's name.</param>
    /// <param name="cancellationToken">Stops waiting for the gather.</param>
    /// <returns>The worker's writing end: write each result with the index of the work it answers.</returns>
    public static async ValueTask<AltingChannelOut<Indexed<T>>> JoinAsync<T>(CspNode node, string name, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(node);
        NamedScatter.RegisterCodec<T>(node);
        return await node.GetAny2OneOutAsync<Indexed<T>>(name, cancellationToken: cancellationToken).ConfigureAwait(false);
    }
}

/// <summary>The reader of a gather (<see cref="NamedGather.CreateAsync{T}"/>).</summary>
/// <typeparam name="T">The type of the results.</typeparam>
/// <remarks>One process reads at a time.</remarks>
public sealed class GatherReader<T> : IPoisonable
{
    // Results read while gathering a range they are not in (or before a cancelled gather ended):
    // they belong to a later call and are never dropped.
    private readonly Dictionary<long, T> _early = [];

    internal GatherReader(string name, AltingChannelIn<Indexed<T>> input)
    {
        Name = name;
        In = input;
    }

    /// <summary>The gather's name.</summary>
    public string Name { get; }

    /// <summary>The gather's channel end, for use as a guard; values read from it directly bypass <see cref="GatherAsync"/>'s ordering.</summary>
    public AltingChannelIn<Indexed<T>> In { get; }

    /// <summary>Reads the next result in the order results arrive (a result set aside by <see cref="GatherAsync"/> first).</summary>
    /// <param name="cancellationToken">Cancels the read; a cancelled read takes nothing.</param>
    /// <returns>The result and the index of the work it answers.</returns>
    /// <exception cref="PoisonException">The gather was poisoned.</exception>
    public async ValueTask<Indexed<T>> ReadAsync(CancellationToken cancellationToken = default)
    {
        foreach (KeyValuePair<long, T> early in _early)
        {
            _early.Remove(early.Key);
            return new Indexed<T>(early.Key, early.Value);
        }

        return await In.ReadAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Reads the results of indices <paramref name="first"/> to <paramref name="first"/> +
    /// <paramref name="count"/> - 1, in whatever order they arrive, and returns them in index order.
    /// </summary>
    /// <param name="first">The first index of the range.</param>
    /// <param name="count">How many results.</param>
    /// <param name="cancellationToken">Stops gathering; results read so far are kept for the next call, none is lost.</param>
    /// <returns>The results, the one of index <paramref name="first"/> + i at i.</returns>
    /// <exception cref="InvalidDataException">A second result arrived for an index: a worker answered one piece of work twice.</exception>
    /// <exception cref="PoisonException">The gather was poisoned.</exception>
    public async ValueTask<T[]> GatherAsync(long first, int count, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        var results = new T[count];
        var have = new bool[count];
        int missing = count;
        for (int i = 0; i < count; i++)
        {
            if (_early.Remove(first + i, out T? value))
            {
                results[i] = value;
                have[i] = true;
                missing--;
            }
        }

        try
        {
            while (missing > 0)
            {
                Indexed<T> result = await In.ReadAsync(cancellationToken).ConfigureAwait(false);
                long at = result.Index - first;
                if (at < 0 || at >= count)
                {
                    Keep(result.Index, result.Value);
                    continue;
                }

                if (have[at])
                {
                    throw Twice(result.Index);
                }

                results[at] = result.Value;
                have[at] = true;
                missing--;
            }
        }
        catch
        {
            for (int i = 0; i < count; i++)
            {
                if (have[i])
                {
                    _early[first + i] = results[i];
                }
            }

            throw;
        }

        return results;
    }

    /// <summary>Poisons the gather: workers' writes throw <see cref="PoisonException"/>.</summary>
    public void Poison() => In.Poison();

    private void Keep(long index, T value)
    {
        if (!_early.TryAdd(index, value))
        {
            throw Twice(index);
        }
    }

    private InvalidDataException Twice(long index) =>
        new($"The gather '{Name}' received a second result for index {index}: a worker answered one piece of work twice. Give each piece of work one index and answer it once.");
}
