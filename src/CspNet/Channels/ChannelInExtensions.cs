using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;
using CspNet.Internal.Processes;

namespace CspNet;

/// <summary>Ways to consume a channel's reading end as a sequence.</summary>
public static class ChannelInExtensions
{
    /// <summary>
    /// Reads values one by one as an async sequence (<c>await foreach</c>), holding no thread while
    /// waiting. The sequence ends cleanly when the channel is poisoned and drained.
    /// </summary>
    /// <typeparam name="T">The type of the values.</typeparam>
    /// <param name="input">The reading end.</param>
    /// <param name="cancellationToken">Cancels the wait for the next value; nothing is taken by a cancelled wait.</param>
    /// <returns>The values read, in order.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="input"/> is null (thrown at the call, not when enumerated).</exception>
    public static IAsyncEnumerable<T> ReadAllAsync<T>(this IChannelIn<T> input, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(input);
        return ReadAllAsyncIterator(input, cancellationToken);
    }

    /// <summary>
    /// Reads values one by one as a blocking sequence (<c>foreach</c>) for thread processes.
    /// The sequence ends cleanly when the channel is poisoned and drained.
    /// </summary>
    /// <typeparam name="T">The type of the values.</typeparam>
    /// <param name="input">The reading end.</param>
    /// <returns>The values read, in order.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="input"/> is null.</exception>
    /// <exception cref="InvalidOperationException">
    /// Called inside an async process, whose thread it would block: use <see cref="ReadAllAsync{T}"/>.
    /// </exception>
    public static IEnumerable<T> ReadAll<T>(this IChannelIn<T> input)
    {
        ArgumentNullException.ThrowIfNull(input);
        ProcessContext.ThrowIfBlockingInAsyncProcess("ReadAll()", "await foreach (var item in ReadAllAsync())");
        return ReadAllIterator(input);
    }

    // The token parameter is [EnumeratorCancellation], so a token given later by
    // WithCancellation is combined with it.
    private static async IAsyncEnumerable<T> ReadAllAsyncIterator<T>(IChannelIn<T> input, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        while (true)
        {
            T item;
            try
            {
                item = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (PoisonException)
            {
                yield break;
            }

            yield return item;
        }
    }

    private static IEnumerable<T> ReadAllIterator<T>(IChannelIn<T> input)
    {
        while (true)
        {
            T item;
            try
            {
                item = input.Read();
            }
            catch (PoisonException)
            {
                yield break;
            }

            yield return item;
        }
    }
}
