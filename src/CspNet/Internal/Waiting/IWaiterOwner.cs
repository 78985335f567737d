namespace CspNet.Internal;

/// <summary>
/// What a <see cref="Waiter{T}"/> needs from the object it parks on (a channel, a barrier,
/// a bucket): a way to cancel it atomically with respect to that object's state. (Reuse needs
/// nothing from the owner: it keeps its waiters in a <see cref="WaiterCache"/>.)
/// </summary>
internal interface IWaiterOwner<T>
{
    /// <summary>
    /// Under the owner's lock, moves the waiter from pending to cancelled and unlinks it.
    /// Returns false if a partner claimed it first. Doing both under the lock keeps the owner's
    /// own bookkeeping (a barrier's count of arrived processes, a channel's "is a writer parked")
    /// exact: a waiter is never counted by the owner and cancelled at the same time.
    /// </summary>
    bool TryCancel(Waiter<T> waiter);
}
