using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Collectives;

/// <summary>
/// A named broadcast: one writer, any number of readers in any programs; every enrolled reader
/// gets each value the writer writes, in order, exactly once.
/// </summary>
/// <remarks>
/// <para>
/// The writer's program hosts the broadcast (<see cref="CreateAsync{T}"/>); readers enrol by its
/// name (<see cref="EnrolAsync{T}"/>) from any program, before or after the writer exists, and
/// resign when done. Each reader has a named One2One channel of its own, hosted by its program,
/// and the writer writes each value to every enrolled reader's channel at once: a write completes
/// when every enrolled reader has taken the value (barrier-synchronised), or, for a reader that
/// enrolled with a buffer, when its buffer holds it.
/// </para>
/// <para>
/// Names: the broadcast <c>name</c> uses the names <c>name/enrol</c> (an Any2One of the writer's
/// program), <c>name/type</c> (an Any2One of the writer's value type that nothing writes to: a
/// reader attaches to it and detaches at once, so that a reader of another type fails at
/// <see cref="EnrolAsync{T}"/> instead of waiting for values that never come) and
/// <c>name/reader/…</c> (one per enrolment).
/// </para>
/// </remarks>
public static class NamedBroadcast
{
    /// <summary>Creates the broadcast <paramref name="name"/>, hosted by <paramref name="node"/>'s program, and returns its one writer.</summary>
    /// <typeparam name="T">The type of the values; every reader must use the same.</typeparam>
    /// <param name="node">The writer's program.</param>
    /// <param name="name">The broadcast's name, unique in the system.</param>
    /// <param name="cancellationToken">Stops waiting for the NameServer.</param>
    /// <returns>The writer. Dispose it to end the broadcast (its readers are then poisoned once they have read every value).</returns>
    /// <exception cref="NameServer.NameAlreadyRegisteredException">Another broadcast (or construct) has this name.</exception>
    public static async ValueTask<BroadcastWriter<T>> CreateAsync<T>(CspNode node, string name, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(node);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ThrowIfNoCodec<T>(node);
        _ = await node.GetAny2OneInAsync<T>(TypeName(name), cancellationToken: cancellationToken).ConfigureAwait(false);
        AltingChannelIn<string> control = await node.GetAny2OneInAsync<string>(ControlName(name), cancellationToken: cancellationToken).ConfigureAwait(false);
        return new BroadcastWriter<T>(node, name, control);
    }

    /// <summary>
    /// Enrols a reader of the broadcast <paramref name="name"/>, waiting until the broadcast
    /// exists and its writer has taken the enrolment.
    /// </summary>
    /// <typeparam name="T">The type of the values, the writer's.</typeparam>
    /// <param name="node">The reader's program.</param>
    /// <param name="name">The broadcast's name.</param>
    /// <param name="buffer">
    /// Null: the writer's every write waits until this reader has taken the value. A buffer
    /// (e.g. <c>new FifoBuffer&lt;T&gt;(16)</c>) lets the writer run that many values ahead of this reader.
    /// </param>
    /// <param name="cancellationToken">Stops waiting for the broadcast.</param>
    /// <returns>
    /// The reader. It gets every value whose write starts once the writer has attached it
    /// (<see cref="BroadcastWriter{T}.WaitForReadersAsync"/> waits for that), with no gap, until it resigns.
    /// </returns>
    /// <exception cref="PoisonException">The broadcast was poisoned or ended, or its writer's program was lost.</exception>
    /// <exception cref="InvalidOperationException">The broadcast's values are of another type than <typeparamref name="T"/>.</exception>
    public static async ValueTask<BroadcastReader<T>> EnrolAsync<T>(CspNode node, string name, IBuffer<T>? buffer = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(node);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ThrowIfNoCodec<T>(node);
        await CheckTypeAsync<T>(node, name, cancellationToken).ConfigureAwait(false);
        string channel = $"{name}/reader/{Guid.NewGuid():N}";
        AltingChannelIn<T> input = await node.GetOne2OneInAsync(channel, buffer, cancellationToken: cancellationToken).ConfigureAwait(false);
        AltingChannelOut<string> control = await node.GetAny2OneOutAsync<string>(ControlName(name), cancellationToken: cancellationToken).ConfigureAwait(false);
        await control.WriteAsync(BroadcastWriter<T>.Enrol + channel, cancellationToken).ConfigureAwait(false);
        return new BroadcastReader<T>(name, input, control, channel);
    }

    private static string ControlName(string name) => name + "/enrol";

    private static string TypeName(string name) => name + "/type";

    /// <summary>
    /// Fails unless the broadcast's values are <typeparamref name="T"/>s: the writer would refuse to
    /// attach this reader's channel, and the reader would wait forever. Attaching to the writer's
    /// typed name checks the type where the writer's program holds it.
    /// </summary>
    private static async Task CheckTypeAsync<T>(CspNode node, string name, CancellationToken cancellationToken)
    {
        AltingChannelOut<T> probe;
        try
        {
            probe = await node.GetAny2OneOutAsync<T>(TypeName(name), cancellationToken: cancellationToken).ConfigureAwait(false);
        }
        catch (InvalidOperationException e)
        {
            throw new InvalidOperationException(
                $"Cannot enrol in the broadcast '{name}' as a reader of '{typeof(T).FullName}': the broadcast's writer carries another type ({e.Message}) Enrol with the writer's value type.",
                e);
        }

        try
        {
            await node.DetachAsync(probe, cancellationToken).ConfigureAwait(false);
        }
        catch (ArgumentException)
        {
            // The writer's own program (or a stand-alone one): a local end holds nothing to release.
        }
    }

    // A type that cannot cross fails here, where the broadcast is declared, not at the first enrolment.
    private static void ThrowIfNoCodec<T>(CspNode node)
    {
        if (node.IsDistributed)
        {
            _ = Internal.Serialization.ValueCodec<T>.Get();
        }
    }
}
