using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Collectives;

/// <summary>
/// Scatter: one writer deals its values to workers in any programs, each value to the first
/// worker free to take it, numbered in the order written (<see cref="Indexed{T}"/>) so that the
/// results can be put back in that order (<see cref="NamedGather"/>).
/// </summary>
/// <remarks>
/// The scatter is a named One2Any channel of <see cref="Indexed{T}"/>, hosted by the writer's
/// program: a write completes when a worker has taken the value (or the buffer holds it), a worker
/// that is not reading takes nothing, and a worker's program that is lost while it waits for a
/// value takes none with it (its read is withdrawn exactly). A value a lost worker had taken is
/// lost with it, as with any program that vanishes holding a value.
/// </remarks>
public static class NamedScatter
{
    /// <summary>Creates the scatter <paramref name="name"/>, hosted by <paramref name="node"/>'s program.</summary>
    /// <typeparam name="T">The type of the values.</typeparam>
    /// <param name="node">The writer's program.</param>
    /// <param name="name">The scatter's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: each write waits for a worker).</param>
    /// <param name="cancellationToken">Stops waiting for the NameServer.</param>
    /// <returns>The writer.</returns>
    public static async ValueTask<ScatterWriter<T>> CreateAsync<T>(CspNode node, string name, IBuffer<Indexed<T>>? buffer = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(node);
        RegisterCodec<T>(node);
        return new ScatterWriter<T>(name, await node.GetOne2AnyOutAsync(name, buffer, cancellationToken: cancellationToken).ConfigureAwait(false));
    }

    /// <summary>Joins the scatter <paramref name="name"/> as a worker, waiting until it exists.</summary>
    /// <typeparam name="T">The type of the values, the writer's.</typeparam>
    /// <param name="node">The worker's program.</param>
    /// <param name="name">The scatter's name.</param>
    /// <param name="cancellationToken">Stops waiting for the scatter.</param>
    /// <returns>The worker's reading end (a guard too): each value read is this worker's alone.</returns>
    public static async ValueTask<AltingChannelIn<Indexed<T>>> JoinAsync<T>(CspNode node, string name, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(node);
        RegisterCodec<T>(node);
        return await node.GetOne2AnyInAsync<Indexed<T>>(name, cancellationToken: cancellationToken).ConfigureAwait(false);
    }

    internal static void RegisterCodec<T>(CspNode node)
    {
        if (node.IsDistributed)
        {
            IndexedCodec<T>.EnsureRegistered();
        }
    }
}

/// <summary>The writer of a scatter (<see cref="NamedScatter.CreateAsync{T}"/>): numbers its values 0, 1, 2, ... and deals each to the first free worker.</summary>
/// <typeparam name="T">The type of the values.</typeparam>
/// <remarks>A scatter has one writer: write from one process at a time.</remarks>
public sealed class ScatterWriter<T> : IPoisonable
{
    private readonly IChannelOut<Indexed<T>> _output;
    private long _next;

    internal ScatterWriter(string name, IChannelOut<Indexed<T>> output)
    {
        Name = name;
        _output = output;
    }

    /// <summary>The scatter's name.</summary>
    public string Name { get; }

    /// <summary>How many values were written (the index the next one gets).</summary>
    public long Written => Interlocked.Read(ref _next);

    /// <summary>Deals <paramref name="value"/> to the first free worker.</summary>
    /// <param name="value">The value.</param>
    /// <returns>The index it was sent with.</returns>
    /// <exception cref="PoisonException">The scatter was poisoned.</exception>
    public long Write(T value) => Blocking.Wait(WriteAsync(value, CancellationToken.None), "Write");

    /// <summary>Deals <paramref name="value"/> to the first free worker without holding a thread.</summary>
    /// <param name="value">The value.</param>
    /// <param name="cancellationToken">Cancels the write; a cancelled write reaches no worker and uses no index.</param>
    /// <returns>The index it was sent with.</returns>
    /// <exception cref="PoisonException">The scatter was poisoned.</exception>
    public async ValueTask<long> WriteAsync(T value, CancellationToken cancellationToken = default)
    {
        long index = Interlocked.Read(ref _next);
        await _output.WriteAsync(new Indexed<T>(index, value), cancellationToken).ConfigureAwait(false);
        Interlocked.Exchange(ref _next, index + 1);
        return index;
    }

    /// <summary>Poisons the scatter: workers get <see cref="PoisonException"/> (after the values buffered before).</summary>
    public void Poison() => _output.Poison();
}
