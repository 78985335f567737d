using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Collectives;

/// <summary>
/// An enrolled reader of a named broadcast (<see cref="NamedBroadcast.EnrolAsync{T}"/>): it reads
/// the writer's values in order, each once, until it resigns or the broadcast ends.
/// </summary>
/// <typeparam name="T">The type of the values.</typeparam>
/// <remarks>
/// One process reads at a time, as on a One2One channel; <see cref="In"/> is that channel's end,
/// for use as a guard of an <see cref="Alternative"/>. Resign (<see cref="ResignAsync"/>, or
/// dispose) before the program leaves: a reader that leaves enrolled poisons the broadcast.
/// </remarks>
public sealed class BroadcastReader<T> : IChannelIn<T>, IAsyncDisposable
{
    private readonly AltingChannelOut<string> _control;
    private readonly string _channel;
    private int _resigned;

    internal BroadcastReader(string name, AltingChannelIn<T> input, AltingChannelOut<string> control, string channel)
    {
        Name = name;
        In = input;
        _control = control;
        _channel = channel;
    }

    /// <summary>The broadcast's name.</summary>
    public string Name { get; }

    /// <summary>This reader's channel from the writer: read it, or select over it.</summary>
    public AltingChannelIn<T> In { get; }

    /// <summary>Reads the next value of the broadcast.</summary>
    /// <returns>The value.</returns>
    /// <exception cref="PoisonException">The broadcast ended or was poisoned (after every value written before), or its writer's program was lost.</exception>
    public T Read() => In.Read();

    /// <summary>Reads the next value of the broadcast without holding a thread.</summary>
    /// <param name="cancellationToken">Cancels the read; a cancelled read takes nothing.</param>
    /// <returns>The value.</returns>
    /// <exception cref="PoisonException">The broadcast ended or was poisoned (after every value written before), or its writer's program was lost.</exception>
    public ValueTask<T> ReadAsync(CancellationToken cancellationToken = default) => In.ReadAsync(cancellationToken);

    /// <summary>Poisons the broadcast: its writer's next write throws <see cref="PoisonException"/> and poisons every reader.</summary>
    public void Poison() => In.Poison();

    /// <summary>
    /// Leaves the broadcast: the writer stops writing to this reader, without waiting for it. Values
    /// written after the last read and before the writer learnt of the resignation are dropped.
    /// </summary>
    /// <param name="cancellationToken">Stops waiting for the writer's answer; the resignation stands.</param>
    /// <returns>A task that completes when the writer will write to this reader no more.</returns>
    public async ValueTask ResignAsync(CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref _resigned, 1) != 0)
        {
            return;
        }

        try
        {
            await _control.WriteAsync(BroadcastWriter<T>.Resign + _channel, cancellationToken).ConfigureAwait(false);
        }
        catch (PoisonException)
        {
            // The broadcast is over (ended, poisoned, or its writer's program lost): nothing to leave.
            return;
        }

        // The writer answers by poisoning this reader's channel once it writes to it no more.
        try
        {
            while (true)
            {
                _ = await In.ReadAsync(cancellationToken).ConfigureAwait(false);
            }
        }
        catch (PoisonException)
        {
        }
    }

    /// <summary>Resigns (<see cref="ResignAsync"/>).</summary>
    /// <returns>A task that completes when the writer will write to this reader no more.</returns>
    public ValueTask DisposeAsync() => ResignAsync();
}
