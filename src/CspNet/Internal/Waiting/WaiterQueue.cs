using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// FIFO of parked waiters, linked through the waiters themselves so that enqueue, dequeue and
/// removal of a cancelled waiter are O(1) and allocation-free. Not thread-safe: the owning
/// channel's lock guards it.
/// </summary>
/// <remarks>
/// Two kinds of waiter share a queue: plain ones (a thread or async process in a read, write or
/// sync), which can always be claimed under the owner's lock because their cancellation takes the
/// same lock; and waiters parked by an alternation (<see cref="Waiter{T}.Selection"/> set), whose
/// claim commits that whole alternation and fails if it has committed elsewhere.
/// </remarks>
internal struct WaiterQueue<T>
{
    // Only the head is stored: the head's Previous link points at the tail (every other waiter's
    // at its predecessor). A channel holds two queues and a program may hold millions of channels,
    // so a tail field would cost 16 bytes a channel for a link the head has free.
    private Waiter<T>? _head;

    internal readonly bool IsEmpty => _head is null;

    /// <summary>The head, read without the lock: a hint for lock-free readiness checks.</summary>
    internal Waiter<T>? HeadHint => Volatile.Read(ref _head);

    /// <summary>The number of queued waiters (walks the queue: for diagnostics).</summary>
    internal readonly int Count
    {
        get
        {
            int count = 0;
            for (Waiter<T>? w = _head; w is not null; w = w.Next)
            {
                count++;
            }

            return count;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Enqueue(Waiter<T> waiter, bool isReader)
    {
        Debug.Assert(!waiter.IsQueued, "A waiter is queued at most once.");
        waiter.IsQueued = true;
        waiter.IsReader = isReader;
        waiter.Next = null;
        if (_head is not { } head)
        {
            waiter.Previous = waiter;
            Volatile.Write(ref _head, waiter);
            return;
        }

        Waiter<T> tail = head.Previous!;
        tail.Next = waiter;
        waiter.Previous = tail;
        head.Previous = waiter;
    }

    /// <summary>Queues <paramref name="waiter"/> first in line: a released hold gives its writer back its place.</summary>
    internal void EnqueueFront(Waiter<T> waiter, bool isReader)
    {
        Debug.Assert(!waiter.IsQueued, "A waiter is queued at most once.");
        waiter.IsQueued = true;
        waiter.IsReader = isReader;
        if (_head is not { } head)
        {
            waiter.Next = null;
            waiter.Previous = waiter;
        }
        else
        {
            // The new head takes over the link to the tail.
            waiter.Next = head;
            waiter.Previous = head.Previous;
            head.Previous = waiter;
        }

        Volatile.Write(ref _head, waiter);
    }

    /// <summary>
    /// Removes waiters from the front until one can be claimed, and returns it. Waiters of
    /// <paramref name="skip"/> (the caller's own alternation) are passed over and stay queued;
    /// waiters whose claim fails (their alternation committed elsewhere) are dropped on the way.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal Waiter<T>? DequeueClaimed(object? skip = null)
    {
        Waiter<T>? waiter = _head;
        while (waiter is not null)
        {
            Waiter<T>? next = waiter.Next;
            if (skip is null || waiter.Selection != skip)
            {
                Remove(waiter);
                if (waiter.TryClaim())
                {
                    return waiter;
                }
            }

            waiter = next;
        }

        return null;
    }

    /// <summary>Removes and claims the first plain waiter (one not parked by an alternation); null if there is none.</summary>
    internal Waiter<T>? DequeuePlain()
    {
        for (Waiter<T>? waiter = _head; waiter is not null; waiter = waiter.Next)
        {
            if (waiter.Selection is null)
            {
                Remove(waiter);
                bool claimed = waiter.TryClaim();
                Debug.Assert(claimed, "A queued plain waiter is claimable under the owner's lock: its cancellation unlinks it under the same lock.");
                return waiter;
            }
        }

        return null;
    }

    /// <summary>Whether a waiter other than those of <paramref name="skip"/> is queued.</summary>
    /// <remarks>Checked by every party about to park: without <paramref name="skip"/> it is one inlined test.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal readonly bool HasOtherThan(object? skip) => skip is null ? _head is not null : HasOtherThanWalk(skip);

    private readonly bool HasOtherThanWalk(object skip)
    {
        for (Waiter<T>? waiter = _head; waiter is not null; waiter = waiter.Next)
        {
            if (waiter.Selection != skip)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// <see cref="HasOtherThan"/> without the watchers (<see cref="Waiter{T}.IsWatcher"/>): whether a
    /// party other than <paramref name="skip"/> is queued. Walks the queue: called only once
    /// <see cref="HasOtherThan"/> found something.
    /// </summary>
    internal readonly bool HasPartyOtherThan(object? skip)
    {
        for (Waiter<T>? waiter = _head; waiter is not null; waiter = waiter.Next)
        {
            if (!waiter.IsWatcher && (skip is null || waiter.Selection != skip))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Whether a plain waiter (one not parked by an alternation) is queued.</summary>
    internal readonly bool HasPlain()
    {
        for (Waiter<T>? waiter = _head; waiter is not null; waiter = waiter.Next)
        {
            if (waiter.Selection is null)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Tells every alternation parked here, but <paramref name="except"/>, that a partner it cannot
    /// pair with while parked (another alternation) has arrived: it wakes, withdraws, and pairs in
    /// its next scan, where its own state is stable.
    /// </summary>
    internal readonly void SignalSelections(object? except)
    {
        for (Waiter<T>? waiter = _head; waiter is not null; waiter = waiter.Next)
        {
            if (waiter.Selection is { } selection && selection != except)
            {
                waiter.SignalSelection();
            }
        }
    }

    /// <summary>Removes every queued waiter and returns the list of those that could be claimed.</summary>
    internal Waiter<T>? DetachAllClaimed()
    {
        Waiter<T>? claimed = null;
        while (_head is { } head)
        {
            Remove(head);
            if (head.TryClaim())
            {
                // Reuse the Next link to chain the claimed ones for the caller.
                head.Next = claimed;
                claimed = head;
            }
        }

        return claimed;
    }

    /// <summary>
    /// Cancellation side, under the owner's lock: wins <paramref name="waiter"/> for cancellation and
    /// unlinks it. False if a partner claimed it first. <paramref name="wasQueued"/> tells whether it
    /// had been queued (a waiter cancelled before it could be queued never was).
    /// </summary>
    internal bool TryCancel(Waiter<T> waiter, out bool wasQueued)
    {
        wasQueued = false;
        if (!waiter.TryCancel())
        {
            return false;
        }

        wasQueued = waiter.IsQueued;
        Remove(waiter);
        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Remove(Waiter<T> waiter)
    {
        if (!waiter.IsQueued)
        {
            return;
        }

        Waiter<T> head = _head!;
        Waiter<T>? next = waiter.Next;
        if (waiter == head)
        {
            if (next is not null)
            {
                // The next waiter becomes the head and inherits the link to the tail.
                next.Previous = waiter.Previous;
            }

            Volatile.Write(ref _head, next);
        }
        else
        {
            Waiter<T> previous = waiter.Previous!;
            previous.Next = next;
            if (next is null)
            {
                head.Previous = previous; // The tail left: its predecessor is the new tail.
            }
            else
            {
                next.Previous = previous;
            }
        }

        waiter.Next = null;
        waiter.Previous = null;
        waiter.IsQueued = false;
    }
}
