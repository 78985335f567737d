using System.Runtime.CompilerServices;
using System.Threading;
using CspNet.Internal;

namespace CspNet;

// What a channel makes only when first needed, in one field: its reusable async waiters (a
// WaiterCache: one waiter for either direction, a pair once one was not enough) and its own ends
// In and Out. A program may hold millions of channels (JVMCSP's live-process table); most park an
// async process now and then and are used through the channel itself, never through In or Out,
// so one field serves both, and the rarer ends carry the waiter cache when they exist.
//
// _lazy holds, in turn:
//   null, an AsyncWaiter or a pair of them  - no end yet: the waiter cache itself;
//   a ChannelWriteEnd                       - Out was asked for: the cache is in the end's Waiters;
//   a ChannelReadEnd                        - In was asked for (the end every read checks first):
//                                             the cache in its Waiters, Out (if made) in its Sibling.
// Every change is one compare-exchange. A race can only leave a waiter out of the cache (the next
// operation makes another); it never hands out a waiter in use, because a waiter is rented by its
// own mark (AsyncWaiter.TryRent), not by being taken out of the cache.
public abstract partial class CspChannel<T>
{
    private object? _lazy;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private AsyncWaiter<T> RentWaiter(bool isReader)
    {
        object? lazy = Volatile.Read(ref _lazy);
        if (lazy is ChannelReadEnd<T> readEnd)
        {
            return WaiterCache.Rent<T>(ref readEnd.Waiters, isReader);
        }

        if (lazy is ChannelWriteEnd<T> writeEnd)
        {
            return WaiterCache.Rent<T>(ref writeEnd.Waiters, isReader);
        }

        return WaiterCache.Rent<T>(ref _lazy, isReader);
    }

    private ChannelReadEnd<T> MakeIn()
    {
        while (true)
        {
            object? current = Volatile.Read(ref _lazy);
            if (current is ChannelReadEnd<T> made)
            {
                return made;
            }

            // Takes over the writing end made before it, or the waiter cache; the exchange fails if
            // either changed meanwhile.
            var end = new ChannelReadEnd<T>(this);
            if (current is ChannelWriteEnd<T> writeEnd)
            {
                end.Sibling = writeEnd;
                end.Waiters = Volatile.Read(ref writeEnd.Waiters);
            }
            else
            {
                end.Waiters = current;
            }

            if (Interlocked.CompareExchange(ref _lazy, end, current) == current)
            {
                return end;
            }
        }
    }

    private ChannelWriteEnd<T> MakeOut()
    {
        while (true)
        {
            object? current = Volatile.Read(ref _lazy);
            if (current is ChannelReadEnd<T> readEnd)
            {
                var beside = new ChannelWriteEnd<T>(this);
                return Interlocked.CompareExchange(ref readEnd.Sibling, beside, null) ?? beside;
            }

            if (current is ChannelWriteEnd<T> made)
            {
                return made;
            }

            var end = new ChannelWriteEnd<T>(this) { Waiters = current };
            if (Interlocked.CompareExchange(ref _lazy, end, current) == current)
            {
                return end;
            }
        }
    }
}
