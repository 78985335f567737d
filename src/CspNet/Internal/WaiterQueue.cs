using System.Diagnostics;

namespace CspNet.Internal;

/// <summary>
/// FIFO of parked waiters, linked through the waiters themselves so that enqueue, dequeue and
/// removal of a cancelled waiter are O(1) and allocation-free. Not thread-safe: the owning
/// channel's lock guards it.
/// </summary>
internal struct WaiterQueue<T>
{
    private Waiter<T>? _head;
    private Waiter<T>? _tail;

    internal readonly bool IsEmpty => _head is null;

    internal void Enqueue(Waiter<T> waiter)
    {
        Debug.Assert(!waiter.IsQueued, "A waiter is queued at most once.");
        waiter.IsQueued = true;
        waiter.Next = null;
        waiter.Previous = _tail;
        if (_tail is null)
        {
            _head = waiter;
        }
        else
        {
            _tail.Next = waiter;
        }

        _tail = waiter;
    }

    /// <summary>
    /// Removes queued waiters from the head until one can be claimed, and returns it.
    /// Cancellation unlinks its waiter under the same lock, so a plain waiter found here is
    /// always claimable; waiters that fail the claim are dropped on the way.
    /// </summary>
    internal Waiter<T>? DequeueClaimed()
    {
        while (_head is { } head)
        {
            Remove(head);
            if (head.TryClaim())
            {
                return head;
            }
        }

        return null;
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

    internal void Remove(Waiter<T> waiter)
    {
        if (!waiter.IsQueued)
        {
            return;
        }

        if (waiter.Previous is null)
        {
            _head = waiter.Next;
        }
        else
        {
            waiter.Previous.Next = waiter.Next;
        }

        if (waiter.Next is null)
        {
            _tail = waiter.Previous;
        }
        else
        {
            waiter.Next.Previous = waiter.Previous;
        }

        waiter.Next = null;
        waiter.Previous = null;
        waiter.IsQueued = false;
    }
}
