using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;

namespace CspNet;

/// <summary>
/// Base of the four channel kinds. A channel is both its reading end (<see cref="IChannelIn{T}"/>)
/// and its writing end (<see cref="IChannelOut{T}"/>): hand it to a process as whichever end that
/// process should see.
/// </summary>
/// <typeparam name="T">The type of the values carried. Values are passed by reference, not copied.</typeparam>
/// <remarks>
/// <para>
/// Unbuffered by default: a write completes only when a reader has taken the value. With an
/// <see cref="IBuffer{T}"/> a write completes once the buffer has accepted the value.
/// </para>
/// <para>
/// Thread-safety: all members are safe to call from any thread. Blocking calls (<c>Read</c>,
/// <c>Write</c>) park the calling thread; async calls park nothing but the operation. Both kinds
/// meet on the same channel. Each operation takes one short lock per channel.
/// </para>
/// <para>
/// Poison: <see cref="Poison"/> fails every parked party and every later write with
/// <see cref="PoisonException"/>. Values already in a buffer are not discarded: reads return
/// them first and fail only when the buffer is empty, so no value whose write succeeded is lost.
/// </para>
/// </remarks>
[DebuggerDisplay("{_core.DebuggerDisplay,nq}")]
public abstract class CspChannel<T> : IChannelIn<T>, IChannelOut<T>
{
    private readonly ChannelCore<T> _core;
    private ChannelReadEnd<T>? _in;
    private ChannelWriteEnd<T>? _out;

    private protected CspChannel(IBuffer<T>? buffer, ChannelShape shape)
    {
        _core = new ChannelCore<T>(buffer, shape);
    }

    /// <summary>The engine, for the distributed layer that hosts named channels on it.</summary>
    internal ChannelCore<T> Core => _core;

    /// <summary>
    /// The channel's reading end as an <see cref="AltingChannelIn{T}"/>, usable as a guard. One end
    /// object per channel: on shared-reader channels (One2Any, Any2Any) where several processes
    /// alternate, give each process its own end with <see cref="CreateIn"/>.
    /// </summary>
    public AltingChannelIn<T> In => _in ?? Interlocked.CompareExchange(ref _in, new ChannelReadEnd<T>(_core), null) ?? _in;

    /// <summary>
    /// The channel's writing end as an <see cref="AltingChannelOut{T}"/>, usable as an output guard.
    /// One end object per channel: on shared-writer channels (Any2One, Any2Any) where several
    /// processes alternate, give each process its own end with <see cref="CreateOut"/>.
    /// </summary>
    public AltingChannelOut<T> Out => _out ?? Interlocked.CompareExchange(ref _out, new ChannelWriteEnd<T>(_core), null) ?? _out;

    /// <summary>
    /// Creates a new reading end for one process. An alternation holds the value it chose in the
    /// end, so processes that alternate over a shared reading end each need their own. An end
    /// holds nothing in the channel between selections: unused ends are simply collected.
    /// </summary>
    /// <returns>A new reading end.</returns>
    public AltingChannelIn<T> CreateIn() => new ChannelReadEnd<T>(_core);

    /// <summary>Creates a new writing end for one process (its offered value belongs to that process).</summary>
    /// <returns>A new writing end.</returns>
    public AltingChannelOut<T> CreateOut() => new ChannelWriteEnd<T>(_core);

    /// <summary>Whether the channel has been poisoned.</summary>
    public bool IsPoisoned => _core.IsPoisoned;

    /// <inheritdoc />
    /// <remarks>After a selection chose <see cref="In"/>, this returns the value the selection took.</remarks>
    public T Read() => _in is { IsHolding: true } own ? own.Read() : _core.Read();

    /// <inheritdoc />
    /// <remarks>After a selection chose <see cref="In"/>, this returns the value the selection took.</remarks>
    public ValueTask<T> ReadAsync(CancellationToken cancellationToken = default) =>
        _in is { IsHolding: true } own ? own.ReadAsync(cancellationToken) : _core.ReadAsync(cancellationToken);

    /// <inheritdoc />
    public void Write(T value) => _core.Write(value);

    /// <inheritdoc />
    public ValueTask WriteAsync(T value, CancellationToken cancellationToken = default) =>
        _core.WriteAsync(value, cancellationToken);

    /// <inheritdoc />
    public void Poison() => _core.Poison();

    private protected static IBuffer<T> RequireBuffer(IBuffer<T> buffer) =>
        buffer ?? throw new ArgumentNullException(nameof(buffer), "Pass an IBuffer<T> such as new FifoBuffer<T>(capacity), or use the parameterless constructor for an unbuffered channel.");
}
