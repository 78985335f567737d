using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Internal;

/// <summary>
/// The engine behind every channel kind: one lock, an optional buffer, and one queue each of
/// parked readers and parked writers. Thread and async parties use the same queues, so a
/// blocking writer pairs with an async reader and the reverse.
/// </summary>
/// <remarks>
/// All state changes happen under <see cref="_lock"/>; waking a partner always happens after
/// the lock is released (a woken thread would otherwise run straight into the lock we hold).
/// </remarks>
internal sealed class ChannelCore<T> : IWaiterOwner<T>
{
    private readonly Lock _lock = new();
    private readonly IBuffer<T>? _buffer;
    private readonly bool _singleReader;
    private readonly bool _singleWriter;
    private readonly string _kindName; // e.g. "One2OneChannel": a literal, shared by every channel of the kind

    private WaiterQueue<T> _readers;
    private WaiterQueue<T> _writers;
    private bool _poisoned;

    // Reading ends that alternations watch: told (under the lock) whenever the channel goes from
    // having nothing to read to having something, so their alternation never needs to poll.
    private List<ChannelReadEnd<T>>? _watchers;

    // One recycled async waiter per direction covers the common case of one outstanding
    // operation per end without allocating; concurrent operations on Any ends allocate.
    private AsyncWaiter<T>? _cachedReader;
    private AsyncWaiter<T>? _cachedWriter;

    internal ChannelCore(IBuffer<T>? buffer, bool singleReader, bool singleWriter, string kind)
    {
        _buffer = buffer;
        _singleReader = singleReader;
        _singleWriter = singleWriter;
        _kindName = kind;
    }

    // Composed only when an exception needs it: a per-channel name string would cost every
    // channel (and a program may hold millions) some 60 bytes.
    private string Kind => $"{_kindName}<{typeof(T).Name}>";

    internal bool IsPoisoned
    {
        get
        {
            lock (_lock)
            {
                return _poisoned;
            }
        }
    }

    internal T Read()
    {
        T item;
        Waiter<T>? partner;
        SyncWaiter<T> waiter;
        lock (_lock)
        {
            AssertInvariants();
            if (TryTakeLocked(out item, out partner))
            {
                goto Done;
            }

            ThrowIfCannotParkLocked(isReader: true);
            waiter = SyncWaiter<T>.ForCurrentThread();
            _readers.Enqueue(waiter);
        }

        waiter.WaitForPartner();
        T received = waiter.Item!;
        waiter.Item = default;
        return received;

    Done:
        partner?.Wake();
        return item;
    }

    internal void Write(T item)
    {
        Waiter<T>? partner;
        SyncWaiter<T> waiter;
        lock (_lock)
        {
            AssertInvariants();
            ThrowIfPoisonedLocked();
            if (TryPutLocked(item, out partner))
            {
                goto Done;
            }

            ThrowIfCannotParkLocked(isReader: false);
            waiter = SyncWaiter<T>.ForCurrentThread();
            waiter.Item = item;
            EnqueueWriterLocked(waiter);
        }

        // Returns only when a reader has taken the item (or moved it into the buffer).
        waiter.WaitForPartner();
        return;

    Done:
        partner?.Wake();
    }

    internal ValueTask<T> ReadAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<T>(cancellationToken);
        }

        T item;
        Waiter<T>? partner;
        lock (_lock)
        {
            AssertInvariants();
            if (TryTakeLocked(out item, out partner))
            {
                goto Done;
            }

            if (CannotParkLocked(isReader: true) is { } error)
            {
                return ValueTask.FromException<T>(error);
            }

            if (!cancellationToken.CanBeCanceled)
            {
                AsyncWaiter<T> waiter = RentWaiter(isReader: true);
                _readers.Enqueue(waiter);
                return waiter.AsReadTask();
            }
        }

        return ReadAsyncCancellable(cancellationToken);

    Done:
        partner?.Wake();
        return new ValueTask<T>(item);
    }

    private ValueTask<T> ReadAsyncCancellable(CancellationToken cancellationToken)
    {
        AsyncWaiter<T> waiter = RentWaiter(isReader: true);
        waiter.RegisterCancellation(cancellationToken);

        T item;
        Waiter<T>? partner;
        Exception? error;
        lock (_lock)
        {
            AssertInvariants();
            if (TryTakeLocked(out item, out partner))
            {
                goto Done;
            }

            error = CannotParkLocked(isReader: true);
            if (error is null)
            {
                // If cancellation already won, the waiter holds the cancellation and must not be queued.
                if (waiter.State == Waiter<T>.Pending)
                {
                    _readers.Enqueue(waiter);
                }

                return waiter.AsReadTask();
            }
        }

        waiter.Discard();
        return ValueTask.FromException<T>(error);

    Done:
        waiter.Discard();
        partner?.Wake();
        return new ValueTask<T>(item);
    }

    internal ValueTask WriteAsync(T item, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        Waiter<T>? partner;
        lock (_lock)
        {
            AssertInvariants();
            if (_poisoned)
            {
                return ValueTask.FromException(ThrowHelper.Poisoned(Kind));
            }

            if (TryPutLocked(item, out partner))
            {
                goto Done;
            }

            if (CannotParkLocked(isReader: false) is { } error)
            {
                return ValueTask.FromException(error);
            }

            if (!cancellationToken.CanBeCanceled)
            {
                AsyncWaiter<T> waiter = RentWaiter(isReader: false);
                waiter.Item = item;
                EnqueueWriterLocked(waiter);
                return waiter.AsWriteTask();
            }
        }

        return WriteAsyncCancellable(item, cancellationToken);

    Done:
        partner?.Wake();
        return default;
    }

    private ValueTask WriteAsyncCancellable(T item, CancellationToken cancellationToken)
    {
        AsyncWaiter<T> waiter = RentWaiter(isReader: false);
        waiter.RegisterCancellation(cancellationToken);

        Waiter<T>? partner;
        Exception? error;
        lock (_lock)
        {
            AssertInvariants();
            error = _poisoned ? ThrowHelper.Poisoned(Kind) : null;
            if (error is null && TryPutLocked(item, out partner))
            {
                goto Done;
            }

            error ??= CannotParkLocked(isReader: false);
            if (error is null)
            {
                if (waiter.State == Waiter<T>.Pending)
                {
                    waiter.Item = item;
                    EnqueueWriterLocked(waiter);
                }

                return waiter.AsWriteTask();
            }
        }

        waiter.Discard();
        return ValueTask.FromException(error);

    Done:
        waiter.Discard();
        partner?.Wake();
        return default;
    }

    /// <summary>
    /// Poisons the channel: every parked party, thread or async, fails with
    /// <see cref="PoisonException"/>, as does every later write. Reads still drain items already
    /// in the buffer (their writers were told the write succeeded), then fail.
    /// </summary>
    internal void Poison()
    {
        Waiter<T>? readers;
        Waiter<T>? writers;
        lock (_lock)
        {
            if (_poisoned)
            {
                return;
            }

            _poisoned = true;
            readers = _readers.DetachAllClaimed();
            writers = _writers.DetachAllClaimed();

            // Errors are set under the lock: an alternation whose offer was claimed here learns of
            // the failure when it withdraws the offer, which takes this lock.
            SetPoisonLocked(readers);
            SetPoisonLocked(writers);
            NotifyWatchersLocked();
            AssertInvariants();
        }

        WakeAll(readers);
        WakeAll(writers);
    }

    private void SetPoisonLocked(Waiter<T>? chain)
    {
        for (; chain is not null; chain = chain.Next)
        {
            chain.Item = default;
            chain.Error = ThrowHelper.Poisoned(Kind);
        }
    }

    private static void WakeAll(Waiter<T>? chain)
    {
        while (chain is { } waiter)
        {
            chain = waiter.Next;
            waiter.Next = null;
            waiter.Wake();
        }
    }

    internal PoisonException NewPoisonException() => ThrowHelper.Poisoned(Kind);

    // ---- alternation ----------------------------------------------------------------------

    /// <summary>Points <paramref name="end"/>'s readiness at <paramref name="alternative"/> and reports the current readiness.</summary>
    internal void ActivateInput(ChannelReadEnd<T> end, AlternativeCore alternative, int index)
    {
        AlternativeCore? previous;
        lock (_lock)
        {
            previous = end.ActiveAlternative;
            end.ActiveAlternative = alternative;
            end.ActiveIndex = index;
            if (!end.IsWatching)
            {
                end.IsWatching = true;
                (_watchers ??= []).Add(end);
            }

            if (HasSomethingToReadLocked())
            {
                alternative.SignalReady(index);
            }
            else
            {
                alternative.ClearReady(index);
            }
        }

        if (previous is not null && previous != alternative)
        {
            // The end now reports to another alternation of the same process; the old one must
            // re-activate before its next selection.
            previous.MarkStale();
        }
    }

    /// <summary>
    /// A selecting alternation tries to take a value for <paramref name="end"/>. On success the
    /// value (or the poison) is held in the end for the process's next read.
    /// </summary>
    internal bool TryCommitInput(ChannelReadEnd<T> end, AlternativeCore alternative, int index)
    {
        if (end.IsHolding)
        {
            // Chosen before and not read yet: still ready, and taking another value would
            // overwrite the one held.
            return true;
        }

        Waiter<T>? partner;
        lock (_lock)
        {
            AssertInvariants();
            if (TryTakeLocked(out T item, out partner))
            {
                end.Hold(item);
            }
            else if (_poisoned)
            {
                end.HoldPoison();
            }
            else
            {
                // Nothing to read: clear the bit under the lock, so that a writer arriving next
                // (which needs the lock) is sure to set it again.
                alternative.ClearReady(index);
                return false;
            }
        }

        partner?.Wake();
        return true;
    }

    /// <summary>
    /// Scan phase of an output guard: deliver <paramref name="value"/> if a reader or buffer space
    /// is there. The alternation has no offers out, so nobody else can commit it meanwhile.
    /// </summary>
    internal bool TryCommitOutput(T value, out PoisonException? failure)
    {
        Waiter<T>? partner;
        lock (_lock)
        {
            AssertInvariants();
            if (!CanDeliverLocked())
            {
                failure = null;
                return false;
            }

            DeliverLocked(value, out partner, out failure);
        }

        partner?.Wake();
        return true;
    }

    /// <summary>
    /// Enable phase of an output guard: deliver now if possible (first committing the
    /// alternation, which may already have been claimed through another offer), else park the offer.
    /// </summary>
    internal EnableResult EnableOutput(ChannelWriteEnd<T> end, AlternativeCore alternative, int index, T value, out PoisonException? failure)
    {
        Waiter<T>? partner;
        failure = null;
        lock (_lock)
        {
            AssertInvariants();
            if (!CanDeliverLocked())
            {
                OfferWaiter<T> offer = end.OfferNode;
                if (_singleWriter && !_writers.IsEmpty)
                {
                    throw ThrowHelper.SharedOneEnd(Kind, isReader: false);
                }

                offer.Prepare(alternative, index, value);
                EnqueueWriterLocked(offer, offering: alternative);
                return EnableResult.Waiting;
            }

            if (!alternative.TryClaimSelf(index))
            {
                return EnableResult.Lost;
            }

            DeliverLocked(value, out partner, out failure);
        }

        partner?.Wake();
        return EnableResult.Committed;
    }

    /// <summary>Withdraws a parked offer, if no reader has claimed it.</summary>
    internal void RemoveOffer(OfferWaiter<T> offer)
    {
        lock (_lock)
        {
            _writers.Remove(offer);
            AssertInvariants();
        }
    }

    private bool CanDeliverLocked() => _poisoned || !_readers.IsEmpty || (_buffer is { } buffer && !buffer.IsFull);

    private void DeliverLocked(T value, out Waiter<T>? partner, out PoisonException? failure)
    {
        failure = null;
        partner = null;
        if (_poisoned)
        {
            failure = ThrowHelper.Poisoned(Kind);
            return;
        }

        bool delivered = TryPutLocked(value, out partner);
        Debug.Assert(delivered, "Parked readers are plain waiters and stay claimable under the lock; buffer space stays free under it.");
    }

    private bool HasSomethingToReadLocked() => _poisoned || !_writers.IsEmpty || (_buffer is { } buffer && buffer.Count > 0);

    /// <summary>
    /// Parks a writer (or an alternation's offer) and tells the watching alternations. Every park
    /// is reported, not only the first: a queue that already held something may have held only
    /// a watcher's own offer, which that watcher cannot take. The offering alternation itself is
    /// not told about its own offer, or it would wake itself, withdraw, rescan and offer again
    /// forever.
    /// </summary>
    private void EnqueueWriterLocked(Waiter<T> writer, AlternativeCore? offering = null)
    {
        _writers.Enqueue(writer);
        NotifyWatchersLocked(offering);
    }

    /// <summary>
    /// Sets the ready bit of every watching alternation (but <paramref name="except"/>). A parked
    /// alternation is woken here, under the lock: waking is a flag set plus, for a thread, a
    /// monitor pulse, and doing it here keeps "bit set" and "state checked" in the channel's order.
    /// </summary>
    private void NotifyWatchersLocked(AlternativeCore? except = null)
    {
        if (_watchers is null)
        {
            return;
        }

        foreach (ChannelReadEnd<T> end in _watchers)
        {
            if (end.ActiveAlternative is { } alternative && alternative != except)
            {
                alternative.SignalReady(end.ActiveIndex);
            }
        }
    }

    /// <inheritdoc />
    public bool TryCancel(AsyncWaiter<T> waiter)
    {
        lock (_lock)
        {
            if (!waiter.TryCancel())
            {
                return false;
            }

            if (waiter.IsReader)
            {
                _readers.Remove(waiter);
            }
            else
            {
                _writers.Remove(waiter);
            }

            AssertInvariants();
            return true;
        }
    }

    /// <inheritdoc />
    public void ReturnWaiter(AsyncWaiter<T> waiter)
    {
        if (waiter.IsReader)
        {
            Volatile.Write(ref _cachedReader, waiter);
        }
        else
        {
            Volatile.Write(ref _cachedWriter, waiter);
        }
    }

    private AsyncWaiter<T> RentWaiter(bool isReader) =>
        (isReader ? Interlocked.Exchange(ref _cachedReader, null) : Interlocked.Exchange(ref _cachedWriter, null))
        ?? new AsyncWaiter<T>(this, isReader);

    /// <summary>Takes an item from the buffer or a parked writer, if there is one.</summary>
    private bool TryTakeLocked(out T item, out Waiter<T>? partner)
    {
        if (_buffer is { } buffer && buffer.Count > 0)
        {
            item = buffer.Take();

            // A slot is free now: move one parked writer's item in, which completes its write.
            partner = _writers.DequeueClaimed();
            if (partner is not null)
            {
                buffer.Put(partner.Item!);
                partner.Item = default;
            }

            return true;
        }

        partner = _writers.DequeueClaimed();
        if (partner is not null)
        {
            item = partner.Item!;
            partner.Item = default;
            return true;
        }

        item = default!;
        return false;
    }

    /// <summary>Hands an item to a parked reader, or stores it in the buffer if there is room.</summary>
    private bool TryPutLocked(T item, out Waiter<T>? partner)
    {
        partner = _readers.DequeueClaimed();
        if (partner is not null)
        {
            partner.Item = item;
            return true;
        }

        if (_buffer is { } buffer && !buffer.IsFull)
        {
            buffer.Put(item);
            if (buffer.Count == 1)
            {
                NotifyWatchersLocked();
            }

            return true;
        }

        return false;
    }

    private void ThrowIfPoisonedLocked()
    {
        if (_poisoned)
        {
            throw ThrowHelper.Poisoned(Kind);
        }
    }

    private void ThrowIfCannotParkLocked(bool isReader)
    {
        if (CannotParkLocked(isReader) is { } error)
        {
            throw error;
        }
    }

    /// <summary>The exception that stops a party from parking, or null if it may park.</summary>
    private Exception? CannotParkLocked(bool isReader)
    {
        if (_poisoned)
        {
            return ThrowHelper.Poisoned(Kind);
        }

        // A One end has exactly one process on it; a second party parked beside the first
        // means the program shares an end it should not. Say so rather than misbehave.
        if (isReader ? _singleReader && !_readers.IsEmpty : _singleWriter && !_writers.IsEmpty)
        {
            return ThrowHelper.SharedOneEnd(Kind, isReader);
        }

        return null;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_readers.IsEmpty || _writers.IsEmpty, "Readers and writers are never parked at the same time.");
        Debug.Assert(_readers.IsEmpty || _buffer is null || _buffer.Count == 0, "Readers park only on an empty buffer.");
        Debug.Assert(_writers.IsEmpty || _buffer is null || _buffer.IsFull, "Writers park only on a full buffer.");
        Debug.Assert(!_poisoned || (_readers.IsEmpty && _writers.IsEmpty), "Nobody stays parked on a poisoned channel.");
    }
}
