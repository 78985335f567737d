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
/// Poison: <see cref="Poison()"/> fails every parked party and every later write with
/// <see cref="PoisonException"/>. Values already in a buffer are not discarded: reads return
/// them first and fail only when the buffer is empty, so no value whose write succeeded is lost.
/// </para>
/// <para>
/// Locking: a channel is its own lock (it guards its state with <c>lock (this)</c>, which saves
/// an object per channel where programs hold millions). Do not lock a channel object in your own
/// code: a thread holding it would stall every operation on the channel.
/// </para>
/// </remarks>
[DebuggerDisplay("{DebuggerDisplay,nq}")]
public abstract partial class CspChannel<T> : IChannelIn<T>, IChannelOut<T>
{
    private protected CspChannel(IBuffer<T>? buffer, ChannelShape shape)
    {
        _buffer = buffer;
        _shape = shape;
    }

    /// <summary>
    /// The channel's reading end as an <see cref="AltingChannelIn{T}"/>, usable as a guard. One end
    /// object per channel: on shared-reader channels (One2Any, Any2Any) where several processes
    /// alternate, give each process its own end with <see cref="CreateIn"/>.
    /// </summary>
    public AltingChannelIn<T> In => Volatile.Read(ref _lazy) as ChannelReadEnd<T> ?? MakeIn();

    /// <summary>
    /// The channel's writing end as an <see cref="AltingChannelOut{T}"/>, usable as an output guard.
    /// One end object per channel: on shared-writer channels (Any2One, Any2Any) where several
    /// processes alternate, give each process its own end with <see cref="CreateOut"/>.
    /// </summary>
    public AltingChannelOut<T> Out => Volatile.Read(ref _lazy) switch
    {
        ChannelWriteEnd<T> own => own,
        ChannelReadEnd<T> { Sibling: { } own } => own,
        _ => MakeOut(),
    };

    /// <summary>
    /// Creates a new reading end for one process. An alternation holds the value it chose in the
    /// end, so processes that alternate over a shared reading end each need their own. An end
    /// holds nothing in the channel between selections: unused ends are simply collected.
    /// </summary>
    /// <returns>A new reading end.</returns>
    public AltingChannelIn<T> CreateIn() => new ChannelReadEnd<T>(this);

    /// <summary>Creates a new writing end for one process (its offered value belongs to that process).</summary>
    /// <returns>A new writing end.</returns>
    public AltingChannelOut<T> CreateOut() => new ChannelWriteEnd<T>(this);

    /// <summary>Whether the channel has been poisoned.</summary>
    public bool IsPoisoned => Volatile.Read(ref _poisoned);

    /// <inheritdoc />
    /// <remarks>After a selection chose <see cref="In"/>, this returns the value the selection took.</remarks>
    public T Read() => _lazy is ChannelReadEnd<T> { IsHolding: true } own ? own.Read() : ReadDirect();

    /// <inheritdoc />
    /// <remarks>After a selection chose <see cref="In"/>, this returns the value the selection took.</remarks>
    public ValueTask<T> ReadAsync(CancellationToken cancellationToken = default) =>
        _lazy is ChannelReadEnd<T> { IsHolding: true } own ? own.ReadAsync(cancellationToken) : ReadDirectAsync(cancellationToken);

    /// <inheritdoc />
    public void Write(T value) => WriteDirect(value);

    /// <inheritdoc />
    public ValueTask WriteAsync(T value, CancellationToken cancellationToken = default) =>
        WriteDirectAsync(value, cancellationToken);

    /// <inheritdoc />
    public void Poison() => PoisonDirect();

    private protected static IBuffer<T> RequireBuffer(IBuffer<T> buffer) =>
        buffer ?? throw new ArgumentNullException(nameof(buffer), "Pass an IBuffer<T> such as new FifoBuffer<T>(capacity), or use the parameterless constructor for an unbuffered channel.");
}
