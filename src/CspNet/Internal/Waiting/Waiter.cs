using System;
using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// One party parked on a channel: a reader waiting for a value or a writer waiting for its value
/// to be taken. The same node type serves blocking thread processes (<see cref="SyncWaiter{T}"/>)
/// and async processes (<see cref="AsyncWaiter{T}"/>), so a channel never needs to know which
/// kind of process it is pairing.
/// </summary>
/// <remarks>
/// Life cycle: a node is <see cref="Pending"/> while queued. Exactly one of two parties moves it
/// out of that state, with one compare-and-swap, and only the winner may touch it afterwards:
/// the partner that pairs with it (to <see cref="Claimed"/>) or its own cancellation callback (to
/// <see cref="Cancelled"/>), both under the owning channel's lock. That single transition is what makes
/// "a value is delivered" and "the operation was cancelled" mutually exclusive, so a cancelled
/// operation can never have consumed or delivered an item.
/// </remarks>
internal abstract class Waiter<T>
{
    internal const int Pending = 0;
    internal const int Claimed = 1;
    internal const int Cancelled = 2;

    private int _state;

    /// <summary>For a writer: the value offered. For a reader: the value received.</summary>
    internal T? Item;

    /// <summary>Exception to surface instead of a value (poison, a buffer's exception).</summary>
    /// <remarks>
    /// Each kind keeps it where it is cheapest: a field, or (<see cref="AsyncWaiter{T}"/>, of
    /// which a program may hold millions parked) one field shared with its cancellation state.
    /// </remarks>
    internal abstract Exception? Error { get; set; }

    // Intrusive doubly linked queue links: removal of a cancelled waiter is O(1). The head's
    // Previous is the queue's tail (see WaiterQueue), so the queue stores its head only.
    internal Waiter<T>? Next;
    internal Waiter<T>? Previous;
    internal bool IsQueued;

    /// <summary>Whether the waiter is (or was last) queued as a reader; set by the owner when it queues it.</summary>
    internal bool IsReader;

    /// <summary>
    /// Whether this parked async operation was counted in <c>cspnet.process.parked</c>: only then is
    /// its end counted. Here rather than in <see cref="AsyncWaiter{T}"/>: beside the two flags above
    /// it fills padding, so no waiter grows.
    /// </summary>
    internal bool CountedParked;

    /// <summary>
    /// For an <see cref="AsyncWaiter{T}"/>: 1 from rent to recycle, so that its owner can keep it
    /// for reuse without taking it out of its cache (see <see cref="WaiterCache"/>). A byte here,
    /// beside the flags above, fills padding; in the subclass it would cost 8 bytes a waiter.
    /// </summary>
    private protected byte Rented;

    internal int State => Volatile.Read(ref _state);

    /// <summary>
    /// The selection a waiter parked by an alternation belongs to, else null. A channel never pairs
    /// two waiters of the same selection: one alternation may offer on a channel and read from it.
    /// </summary>
    internal virtual object? Selection => null;

    /// <summary>
    /// Whether this is a watch (<see cref="ReadinessWatcher{T}"/>) rather than a party: it never
    /// pairs, so it does not make a One end look shared.
    /// </summary>
    internal virtual bool IsWatcher => false;

    /// <summary>For a waiter parked by an alternation: wake that alternation to rescan. Others ignore it.</summary>
    internal virtual void SignalSelection()
    {
    }

    /// <summary>
    /// Partner side: wins the waiter for pairing. Called under the channel lock. An offer parked
    /// by an alternation overrides this to claim the whole alternation instead.
    /// </summary>
    internal virtual bool TryClaim() => Interlocked.CompareExchange(ref _state, Claimed, Pending) == Pending;

    /// <summary>Cancellation side: wins the waiter for cancellation. Called under the owner's lock.</summary>
    internal bool TryCancel() => Interlocked.CompareExchange(ref _state, Cancelled, Pending) == Pending;

    /// <summary>
    /// Gives a claimed plain waiter back to <see cref="Pending"/>, under the owner's lock: a channel
    /// hold (<see cref="ChannelHold{T}"/>) that set a parked writer aside and then released it puts
    /// it back in its queue, where it can be claimed or cancelled again.
    /// </summary>
    internal void Unclaim() => Volatile.Write(ref _state, Pending);

    /// <summary>
    /// Whether the owner asked to cancel the operation after a partner had claimed it (its token
    /// fired, or its thread was interrupted). A hold that releases a writer it had claimed then
    /// completes that cancellation instead of parking the writer again.
    /// </summary>
    internal virtual bool CancellationRequested => false;

    /// <summary>The exception that completes a cancellation found by <see cref="CancellationRequested"/>.</summary>
    internal virtual Exception CreateCancellation() => new OperationCanceledException();

    /// <summary>Makes a completed node reusable. Only the owner calls this, after it has observed completion.</summary>
    protected void ResetState()
    {
        Item = default;
        Error = null;
        Next = null;
        Previous = null;
        IsQueued = false;
        Volatile.Write(ref _state, Pending);
    }

    /// <summary>
    /// Wakes the owner after a successful <see cref="TryClaim"/>. Always called outside the channel
    /// lock, because waking may run continuations or context-switch.
    /// </summary>
    internal abstract void Wake();
}
