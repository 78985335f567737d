using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// The async waiters an owner (a channel, a barrier, a bucket) keeps for reuse, in one field of
/// type <see cref="object"/>: null, one <see cref="AsyncWaiter{T}"/>, or a <see cref="Pair{T}"/>.
/// </summary>
/// <remarks>
/// <para>
/// Why one field and not one per direction: a program may hold millions of channels (JVMCSP's
/// live-process table), most of which never have two async operations outstanding at once, so
/// a channel starts with one waiter that serves either direction. A waiter stays in the cache
/// while it is used (its rented mark says so) and is given back by clearing the mark, so an owner
/// keeps its waiter without an owner field in the waiter.
/// </para>
/// <para>
/// When an operation needs a waiter while the cached one is still in use (a writer parks again
/// before the reader it woke has resumed, which is the steady state of a pipeline), the cache
/// grows once to a pair and stays there, so such channels, as before, allocate nothing per
/// operation. A third concurrent operation (shared ends) gets a waiter that is not kept.
/// </para>
/// </remarks>
internal static class WaiterCache
{
    /// <summary>A waiter of <paramref name="cache"/> for one operation, or a new one (kept if there is room).</summary>
    internal static AsyncWaiter<T> Rent<T>(ref object? cache, bool isReader)
    {
        object? cached = Volatile.Read(ref cache);
        if (cached is AsyncWaiter<T> single)
        {
            if (single.TryRent(isReader))
            {
                return single;
            }

            var second = new AsyncWaiter<T>(isReader);
            Interlocked.CompareExchange(ref cache, new Pair<T>(single, second), single);
            return second;
        }

        if (cached is Pair<T> pair)
        {
            return pair.First.TryRent(isReader) ? pair.First
                : pair.Second.TryRent(isReader) ? pair.Second
                : new AsyncWaiter<T>(isReader);
        }

        var first = new AsyncWaiter<T>(isReader);
        Interlocked.CompareExchange(ref cache, first, null);
        return first;
    }

    /// <summary>Two cached waiters: made once, when one was not enough.</summary>
    private sealed class Pair<T>(AsyncWaiter<T> first, AsyncWaiter<T> second)
    {
        internal AsyncWaiter<T> First { get; } = first;

        internal AsyncWaiter<T> Second { get; } = second;
    }
}
