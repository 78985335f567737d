namespace CspNet.Tests.Alternation.Contract;

/// <summary>What a peer tells its connected ends: a newer <see cref="Version"/> supersedes an older state.</summary>
/// <param name="Version">Grows with every change at the peer.</param>
/// <param name="Ready">Items are queued or reserved, or the channel is poisoned: a reservation may succeed.</param>
/// <param name="Lost">The peer is gone: every reservation fails with <see cref="IOException"/>.</param>
internal readonly record struct PeerState(long Version, bool Ready, bool Lost);

/// <summary>The answer to a reservation request.</summary>
internal enum GrantKind
{
    /// <summary>Nothing reserved: the peer was empty, or another reader held the head.</summary>
    Refused,

    /// <summary>The head item is set aside for the requesting end until it confirms or releases it.</summary>
    Item,

    /// <summary>The channel is poisoned and drained: the end's next read throws <see cref="PoisonException"/>.</summary>
    Poison,
}

/// <summary>
/// The writer's host of a simulated remote channel: a locked FIFO queue with its writers, read by
/// <see cref="DelayedChannelEnd{T}"/>s (through reservations) and plain readers. Writes complete when
/// their item is taken (rendezvous), or at once while fewer than the capacity's items are waiting.
/// </summary>
/// <remarks>
/// <para>
/// At most one reservation is outstanding at a time, so items are taken strictly in queue order and
/// a released item goes back to the front: a writer's items are read in the order written even when
/// reservations fail, are cancelled or are released.
/// </para>
/// <para>
/// Every change that may let a reservation succeed (a write, a confirm, a release, poison, loss) is
/// pushed to every connected end through the <see cref="Latency"/>: late, out of order or twice.
/// </para>
/// </remarks>
internal sealed class RemotePeer<T>(int capacity, Latency latency)
{
    private readonly object _lock = new();
    private readonly LinkedList<Entry> _queue = new();
    private readonly LinkedList<TaskCompletionSource<T>> _takers = new();
    private DelayedChannelEnd<T>[] _ends = [];
    private Entry? _reserved;
    private int _buffered;
    private long _version;
    private bool _poisoned;
    private IOException? _lost;
    private long _steals;

    internal Latency Latency => latency;

    /// <summary>How often (out of 1000) a reservation loses the head to a phantom competing reader, which gives it back a moment later.</summary>
    internal int StealPerMille { get; init; }

    /// <summary>How many reservations a phantom competitor won.</summary>
    internal long Steals => Interlocked.Read(ref _steals);

    /// <summary>Items queued, not counting a reserved one.</summary>
    internal int Count
    {
        get
        {
            lock (_lock)
            {
                return _queue.Count;
            }
        }
    }

    /// <summary>Whether a reservation is outstanding.</summary>
    internal bool HasReservation
    {
        get
        {
            lock (_lock)
            {
                return _reserved is not null;
            }
        }
    }

    /// <summary>A new end connected to this peer, for one reading process.</summary>
    /// <param name="signalKnownReadinessOnEnable">See <see cref="DelayedChannelEnd{T}.SignalKnownReadinessOnEnable"/>.</param>
    internal DelayedChannelEnd<T> CreateEnd(bool signalKnownReadinessOnEnable = true)
    {
        var end = new DelayedChannelEnd<T>(this) { SignalKnownReadinessOnEnable = signalKnownReadinessOnEnable };
        lock (_lock)
        {
            _ends = [.. _ends, end];
        }

        RequestState(end);
        return end;
    }

    /// <summary>Sends <paramref name="end"/> the peer's current state, through the latency.</summary>
    internal void RequestState(DelayedChannelEnd<T> end)
    {
        PeerState state;
        lock (_lock)
        {
            state = StateLocked();
        }

        latency.Post(() => end.OnPeerState(state));
    }

    internal void Write(T value) => WriteAsync(value).AsTask().GetAwaiter().GetResult();

    /// <summary>
    /// Queues <paramref name="value"/>; completes when it is taken, or at once if it fits in the buffer.
    /// A cancelled write has written nothing, unless the item was reserved meanwhile and is then confirmed.
    /// </summary>
    internal async ValueTask WriteAsync(T value, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        var entry = new Entry(this, value, cancellationToken);
        PeerState state;
        lock (_lock)
        {
            ThrowIfClosedLocked();
            if (_buffered < capacity)
            {
                _buffered++;
                entry.Buffered = true;
            }
            else
            {
                entry.Writer = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }

            _queue.AddLast(entry.Node);
            ServeTakersLocked();
            state = ChangedLocked();
        }

        Push(state);
        if (entry.Writer is not { } writer)
        {
            return;
        }

        using CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(
            static e =>
            {
                var entry = (Entry)e!;
                entry.Peer.Withdraw(entry);
            },
            entry);
        await writer.Task.ConfigureAwait(false);
    }

    /// <summary>A plain read at the peer: waits for the head item.</summary>
    internal async ValueTask<T> TakeAsync(CancellationToken cancellationToken)
    {
        var taker = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        LinkedListNode<TaskCompletionSource<T>> node;
        PeerState? state = null;
        lock (_lock)
        {
            if (_lost is { } lost)
            {
                throw new IOException("The peer is lost.", lost);
            }

            node = _takers.AddLast(taker);
            if (ServeTakersLocked())
            {
                state = ChangedLocked();
            }
        }

        if (state is { } changed)
        {
            Push(changed);
        }

        using CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(
            _ =>
            {
                lock (_lock)
                {
                    // Under the lock, so a taker is either served or cancelled, never both.
                    if (node.List is not null)
                    {
                        _takers.Remove(node);
                        taker.TrySetCanceled(cancellationToken);
                    }
                }
            },
            null);
        return await taker.Task.ConfigureAwait(false);
    }

    /// <summary>A writer's cancellation: its item leaves the queue unless it is reserved (then a release drops it).</summary>
    private void Withdraw(Entry entry)
    {
        lock (_lock)
        {
            if (entry.Node.List is not null && !entry.Buffered)
            {
                _queue.Remove(entry.Node);
                entry.Writer!.TrySetCanceled(entry.WriterToken);
            }
        }
    }

    /// <summary>A reservation request arriving at the peer.</summary>
    internal (GrantKind Kind, Entry? Entry, PeerState State) TryReserve()
    {
        lock (_lock)
        {
            if (_lost is { } lost)
            {
                throw new IOException("The peer is lost.", lost);
            }

            if (_reserved is null && _queue.First is { } head)
            {
                _queue.RemoveFirst();
                _reserved = head.Value;
                if (StealPerMille > 0 && Random.Shared.Next(1000) < StealPerMille)
                {
                    // A competing reader got there first; it gives the item back a moment later.
                    _steals++;
                    ThreadPool.UnsafeQueueUserWorkItem(static s => s.Peer.Release(s.Stolen), (Peer: this, Stolen: head.Value), preferLocal: false);
                    return (GrantKind.Refused, null, StateLocked());
                }

                return (GrantKind.Item, head.Value, StateLocked());
            }

            return (_reserved is null && _poisoned ? GrantKind.Poison : GrantKind.Refused, null, StateLocked());
        }
    }

    /// <summary>The reserving end took the item: its writer (or the first one waiting for buffer room) goes on.</summary>
    internal void Confirm(Entry entry)
    {
        PeerState state;
        lock (_lock)
        {
            EndReservationLocked(entry);
            ConsumeLocked(entry);
            ServeTakersLocked();
            state = ChangedLocked();
        }

        Push(state);
    }

    /// <summary>The reserving end gives the item back: it goes to the front of the queue.</summary>
    internal void Release(Entry entry)
    {
        PeerState state;
        lock (_lock)
        {
            EndReservationLocked(entry);
            if (_lost is { } lost)
            {
                entry.Writer?.TrySetException(lost);
            }
            else if (_poisoned && !entry.Buffered)
            {
                entry.Writer!.TrySetException(NewPoison());
            }
            else if (!entry.Buffered && entry.WriterToken.IsCancellationRequested)
            {
                entry.Writer!.TrySetCanceled(entry.WriterToken);
            }
            else
            {
                _queue.AddFirst(entry.Node);
            }

            ServeTakersLocked();
            state = ChangedLocked();
        }

        Push(state);
    }

    /// <summary>Poisons the channel: waiting writers fail; buffered items are still read, then reads throw.</summary>
    internal void Poison()
    {
        PeerState state;
        lock (_lock)
        {
            if (_poisoned || _lost is not null)
            {
                return;
            }

            _poisoned = true;
            for (LinkedListNode<Entry>? node = _queue.First; node is not null;)
            {
                LinkedListNode<Entry>? next = node.Next;
                if (!node.Value.Buffered)
                {
                    _queue.Remove(node);
                    node.Value.Writer!.TrySetException(NewPoison());
                }

                node = next;
            }

            ServeTakersLocked();
            state = ChangedLocked();
        }

        Push(state);
    }

    /// <summary>The connection to the peer breaks: everyone waiting fails with <see cref="IOException"/>; queued items are gone.</summary>
    internal void Lose()
    {
        PeerState state;
        lock (_lock)
        {
            if (_lost is not null)
            {
                return;
            }

            _lost = new IOException("The peer is lost.");
            foreach (Entry entry in _queue)
            {
                entry.Writer?.TrySetException(_lost);
            }

            _queue.Clear();
            foreach (TaskCompletionSource<T> taker in _takers)
            {
                taker.TrySetException(_lost);
            }

            _takers.Clear();
            state = ChangedLocked();
        }

        Push(state);
    }

    private static PoisonException NewPoison() => new("The remote channel has been poisoned.");

    private void ThrowIfClosedLocked()
    {
        if (_lost is { } lost)
        {
            throw new IOException("The peer is lost.", lost);
        }

        if (_poisoned)
        {
            throw NewPoison();
        }
    }

    private void EndReservationLocked(Entry entry)
    {
        if (_reserved != entry)
        {
            throw new InvalidOperationException("The item is not reserved: a reservation was confirmed or released twice.");
        }

        _reserved = null;
    }

    private void ConsumeLocked(Entry entry)
    {
        if (!entry.Buffered)
        {
            entry.Writer!.TrySetResult();
            return;
        }

        _buffered--;
        foreach (Entry waiting in _queue)
        {
            if (!waiting.Buffered)
            {
                // Room in the buffer: the first writer waiting for it goes on.
                waiting.Buffered = true;
                _buffered++;
                waiting.Writer!.TrySetResult();
                break;
            }
        }
    }

    /// <summary>Hands head items to plain readers while no reservation holds the head; returns whether anything changed.</summary>
    private bool ServeTakersLocked()
    {
        bool changed = false;
        while (_takers.First is { } taker && _reserved is null)
        {
            if (_queue.First is { } head)
            {
                _takers.RemoveFirst();
                _queue.RemoveFirst();
                ConsumeLocked(head.Value);
                taker.Value.TrySetResult(head.Value.Value);
                changed = true;
            }
            else if (_poisoned)
            {
                _takers.RemoveFirst();
                taker.Value.TrySetException(NewPoison());
            }
            else
            {
                break;
            }
        }

        return changed;
    }

    private PeerState StateLocked() => new(_version, _queue.Count > 0 || _reserved is not null || _poisoned, _lost is not null);

    private PeerState ChangedLocked()
    {
        _version++;
        return StateLocked();
    }

    private void Push(PeerState state)
    {
        foreach (DelayedChannelEnd<T> end in Volatile.Read(ref _ends))
        {
            latency.Post(() => end.OnPeerState(state));
        }
    }

    /// <summary>A written item and its writer, waiting for the item to be taken unless it is buffered.</summary>
    internal sealed class Entry
    {
        internal Entry(RemotePeer<T> peer, T value, CancellationToken writerToken)
        {
            Peer = peer;
            Value = value;
            WriterToken = writerToken;
            Node = new LinkedListNode<Entry>(this);
        }

        internal RemotePeer<T> Peer { get; }

        internal T Value { get; }

        internal CancellationToken WriterToken { get; }

        /// <summary>The entry's place in the queue, kept so that a release puts it back at the front.</summary>
        internal LinkedListNode<Entry> Node { get; }

        /// <summary>Whether the item occupies buffer room (its writer has gone on).</summary>
        internal bool Buffered { get; set; }

        internal TaskCompletionSource? Writer { get; set; }
    }
}
