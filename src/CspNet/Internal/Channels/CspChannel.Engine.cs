using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using CspNet.Internal;
using CspNet.Internal.Processes;
using CspNet.Internal.Scheduling;

namespace CspNet;

// Invariants, under the lock (AssertInvariants checks them at every exit of a critical section):
//  - plain readers and plain writers are never parked at the same time (but see the next);
//  - plain readers park only on an empty buffer (or none), plain writers only on a full one
//    (reserved slots count as full); while a hold has a buffered value out, readers park whatever
//    the buffer holds (TakesHeldBackLocked), beside writers parked on a full buffer;
//  - a poisoned channel has nobody parked (but readers while reads are held back);
//    _hasBuffered is exactly buffer.Count > 0.
//
// The engine behind every channel kind, folded into the channel object itself: one lock (the
// channel, see CspChannel's remarks), an optional buffer, and one queue each of parked readers and
// parked writers. Thread processes, async processes and alternations park in the same queues, so
// a blocking writer pairs with an async reader or a selecting process alike.
//
// Why one object: a program may hold millions of channels (JVMCSP's live-process table). A
// separate engine object, its Lock and a kind-name string cost 104 more bytes a channel than the
// fields below (80 bytes a One2OneChannel<int>, down from 184). Every engine member is internal
// or private, so the public surface is the one of CspChannel.cs.
//
// All state changes happen under the lock, in one critical section per direction
// (TryReadOrPark, TryWriteOrPark) that every blocking and async operation goes through. Waking a
// partner always happens after the lock is released: a woken thread would otherwise run straight
// into the lock we hold.
//
// User code (a custom IBuffer<T>) runs under the lock. If it throws, the state stays consistent:
// nothing was claimed before the call, or the claimed partner is woken with the exception, so no
// party is left parked and the channel stays usable.
public abstract partial class CspChannel<T> : IWaiterOwner<T>
{
    // Not readonly: the first hold released to a buffered channel wraps it in a FrontSlotBuffer.
    private IBuffer<T>? _buffer;

    private WaiterQueue<T> _readers;
    private WaiterQueue<T> _writers;

    // Buffer slots reserved for values still on their way (see CspChannel.Reservations.cs): they
    // count as full, so the buffer never holds more than its capacity.
    private int _reserved;

    // A byte, not the kind's name: the name is composed only when a message or a metric needs it.
    private readonly ChannelShape _shape;
    private bool _poisoned;

    // Whether the buffer holds anything: written under the lock and read without it as a
    // readiness hint. A flag rather than a copy of the count keeps the scalars in one 8-byte word.
    private bool _hasBuffered;

    private bool SingleReader => _shape.HasSingleReader();

    private bool SingleWriter => _shape.HasSingleWriter();

    // Composed only when an exception needs it: a per-channel name string would cost every
    // channel (and a program may hold millions) some 60 bytes.
    internal string Kind => $"{_shape.ClassName()}<{typeof(T).Name}>";

    /// <summary>
    /// Lock-free hint that a read could succeed now. A stale "no" is harmless: a selection that skips
    /// the guard on it checks again under the lock before it waits.
    /// </summary>
    internal bool MaybeReadable => Volatile.Read(ref _poisoned) || _writers.HeadHint is not null || Volatile.Read(ref _hasBuffered);

    // ---- reads and writes ---------------------------------------------------------------------

    /// <summary>A read that ignores the hand-over slot of <see cref="In"/> (see <see cref="Read"/>).</summary>
    internal T ReadDirect()
    {
        // Checked on every call, not only when it would park: a misuse must not depend on timing.
        ProcessContext.ThrowIfBlockingInAsyncProcess("Read()", "ReadAsync()");
        if (TryReadOrPark(Park.Thread, null, out T item, out Waiter<T>? partner, out Waiter<T>? parked))
        {
            partner?.Wake();
            return item;
        }

        var waiter = (SyncWaiter<T>)parked!;
        waiter.WaitForPartner();
        item = waiter.Item!;
        waiter.Item = default;
        return item;
    }

    internal void WriteDirect(T item)
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Write(value)", "WriteAsync(value)");
        if (TryWriteOrPark(item, Park.Thread, null, out Waiter<T>? partner, out Waiter<T>? parked))
        {
            partner?.Wake();
            return;
        }

        // Returns only when a reader has taken the item (or moved it into the buffer).
        ((SyncWaiter<T>)parked!).WaitForPartner();
    }

#pragma warning disable CA1031 // Exceptions are not swallowed: they fault the returned ValueTask, as an async method would.
    /// <summary>An async read that ignores the hand-over slot of <see cref="In"/>.</summary>
    internal ValueTask<T> ReadDirectAsync(CancellationToken cancellationToken)
    {
        // The path for a token that can be cancelled is a separate method: kept here, its second
        // critical section and registration made this method too large for the JIT to inline the
        // critical section's small helpers into the common, uncancellable read (together with the
        // inlining hints below, some 850 of 6,700 instructions per async CommsTime iteration).
        // A token that cannot be cancelled is never cancelled, so nothing is checked for it.
        if (cancellationToken.CanBeCanceled)
        {
            return ReadAsyncCancellable(cancellationToken);
        }

        // The waiter is rented inside the critical section, only if the read must park.
        try
        {
            if (TryReadOrPark(Park.Async, null, out T item, out Waiter<T>? partner, out Waiter<T>? parked))
            {
                partner?.Wake();
                return new ValueTask<T>(item);
            }

            return AsAsyncWaiter(parked).AsReadTask();
        }
        catch (Exception e)
        {
            return ValueTask.FromException<T>(e);
        }
    }

    /// <summary>
    /// <see cref="ReadAsync"/> with a token that can be cancelled: cancellation is registered before
    /// the waiter can be queued (see <see cref="AsyncWaiter{T}"/>), and only by a read that must
    /// park, because registering costs more than a take.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private ValueTask<T> ReadAsyncCancellable(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<T>(cancellationToken);
        }

        AsyncWaiter<T>? prepared = null;
        try
        {
            if (TryReadOrPark(Park.No, null, out T item, out Waiter<T>? partner, out _))
            {
                partner?.Wake();
                return new ValueTask<T>(item);
            }

            prepared = RentWaiter(isReader: true);
            prepared.RegisterCancellation(this, cancellationToken);
            if (TryReadOrPark(Park.Async, prepared, out item, out partner, out Waiter<T>? parked))
            {
                prepared.Discard();
                partner?.Wake();
                return new ValueTask<T>(item);
            }

            return AsAsyncWaiter(parked).AsReadTask();
        }
        catch (Exception e)
        {
            prepared?.Discard();
            return ValueTask.FromException<T>(e);
        }
    }

    internal ValueTask WriteDirectAsync(T item, CancellationToken cancellationToken)
    {
        // As ReadAsync: the cancellable path apart keeps this one small enough to inline into.
        if (cancellationToken.CanBeCanceled)
        {
            return WriteAsyncCancellable(item, cancellationToken);
        }

        try
        {
            if (TryWriteOrPark(item, Park.Async, null, out Waiter<T>? partner, out Waiter<T>? parked))
            {
                partner?.Wake();
                return default;
            }

            return AsAsyncWaiter(parked).AsWriteTask();
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    /// <summary><see cref="WriteAsync"/> with a token that can be cancelled; see <see cref="ReadAsyncCancellable"/>.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private ValueTask WriteAsyncCancellable(T item, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        AsyncWaiter<T>? prepared = null;
        try
        {
            if (TryWriteOrPark(item, Park.No, null, out Waiter<T>? partner, out _))
            {
                partner?.Wake();
                return default;
            }

            prepared = RentWaiter(isReader: false);
            prepared.RegisterCancellation(this, cancellationToken);
            if (TryWriteOrPark(item, Park.Async, prepared, out partner, out Waiter<T>? parked))
            {
                prepared.Discard();
                partner?.Wake();
                return default;
            }

            return AsAsyncWaiter(parked).AsWriteTask();
        }
        catch (Exception e)
        {
            prepared?.Discard();
            return ValueTask.FromException(e);
        }
    }
#pragma warning restore CA1031

    /// <summary>The waiter a critical section parked with <see cref="Park.Async"/>, which is always an <see cref="AsyncWaiter{T}"/>.</summary>
    private static AsyncWaiter<T> AsAsyncWaiter(Waiter<T>? parked)
    {
        Debug.Assert(parked is AsyncWaiter<T>, "Park.Async parks an AsyncWaiter.");
        return (AsyncWaiter<T>)parked!;
    }

    /// <summary>How the critical section parks a party that cannot complete now.</summary>
    private enum Park
    {
        /// <summary>Not at all: report "would park" (the caller prepares a cancellable waiter first).</summary>
        No,

        /// <summary>This thread's cached <see cref="SyncWaiter{T}"/>.</summary>
        Thread,

        /// <summary>The prepared waiter, or an <see cref="AsyncWaiter{T}"/> rented here.</summary>
        Async,
    }

    /// <summary>
    /// The critical section of every read: takes an item (true, with a partner to wake), or parks a
    /// waiter as <paramref name="park"/> says and returns it in <paramref name="parked"/> (false).
    /// Throws on poison and misuse. A prepared waiter whose cancellation won before it could be
    /// queued is returned unqueued: its task already reports the cancellation. A waiter is taken
    /// only when the party must park, so a read that completes at once touches none.
    /// </summary>
    private bool TryReadOrPark(Park park, AsyncWaiter<T>? prepared, out T item, out Waiter<T>? partner, out Waiter<T>? parked)
    {
        parked = null;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (!TryTakeLocked(self: null, plainOnly: false, out item, out partner))
            {
                ThrowIfCannotParkLocked(isReader: true, self: null);
                if (park != Park.No)
                {
                    parked = ParkLocked(ref _readers, park, prepared, isReader: true);
                }

                AssertInvariants();
                return false;
            }

            AssertInvariants();
        }

        HandOff.CompletedWithoutParking();
        return true;
    }

    /// <summary>The critical section of every write; see <see cref="TryReadOrPark"/>.</summary>
    private bool TryWriteOrPark(T item, Park park, AsyncWaiter<T>? prepared, out Waiter<T>? partner, out Waiter<T>? parked)
    {
        parked = null;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (_poisoned)
            {
                throw CreatePoisoned();
            }

            if (!TryPutLocked(item, self: null, plainOnly: false, out partner))
            {
                ThrowIfCannotParkLocked(isReader: false, self: null);
                if (park != Park.No)
                {
                    parked = ParkLocked(ref _writers, park, prepared, isReader: false);
                    parked.Item = item;
                }

                AssertInvariants();
                return false;
            }

            AssertInvariants();
        }

        HandOff.CompletedWithoutParking();
        return true;
    }

    // Inlined into the two critical sections, as are the helpers below marked so: they run on every
    // operation, and a call each (with the out parameters spilled around it) was a measurable part
    // of a communication.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private Waiter<T> ParkLocked(ref WaiterQueue<T> queue, Park park, AsyncWaiter<T>? prepared, bool isReader)
    {
        AssertLockHeld();
        if (prepared is null)
        {
            // A waiter rented or reset here is Pending: only a prepared one can have been
            // cancelled already.
            Waiter<T> waiter = park == Park.Thread ? SyncWaiter<T>.ForCurrentThread(this) : RentWaiter(isReader);
            queue.Enqueue(waiter, isReader);
            return waiter;
        }

        // A prepared waiter whose cancellation won before it could be queued stays out.
        if (prepared.State == Waiter<T>.Pending)
        {
            queue.Enqueue(prepared, isReader);
        }

        return prepared;
    }

    /// <summary>
    /// Poisons the channel: every parked party, thread, async or alternation, fails with
    /// <see cref="PoisonException"/> (an alternation chooses the poisoned guard), as does every later
    /// write. Reads still drain items already in the buffer (their writers were told the write
    /// succeeded), then fail.
    /// </summary>
    internal void PoisonDirect()
    {
        Waiter<T>? readers;
        Waiter<T>? writers;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            if (_poisoned)
            {
                return;
            }

            Volatile.Write(ref _poisoned, true);

            // Readers parked while a held value may come back stay: the hold's end serves them.
            readers = TakesHeldBackLocked() ? null : _readers.DetachAllClaimed();
            writers = _writers.DetachAllClaimed();
            SetPoisonLocked(readers);
            SetPoisonLocked(writers);
            AssertInvariants();
        }

        WakeAll(readers);
        WakeAll(writers);
        SignalPoisonWatch();
        CoreMetrics.CountPoisoned(_shape.ClassName());
    }

    /// <summary>
    /// Poisons the channel for a reason the core cannot see (the distributed layer: the program
    /// holding the only writing end vanished): every party fails with the exception
    /// <paramref name="reason"/> makes, a <see cref="PoisonException"/> that says why.
    /// </summary>
    internal void Poison(Func<PoisonException> reason)
    {
        // Kept beside the channel, not in it: a field would cost every channel (and a program may
        // hold millions) for a case only named channels have.
        PoisonReasons.AddOrUpdate(this, reason);
        PoisonDirect();
    }

    private static readonly ConditionalWeakTable<object, Func<PoisonException>> PoisonReasons = new();

    /// <summary>The exception a party of a poisoned channel gets: a fresh one each time, since a thrown exception records its stack.</summary>
    internal PoisonException CreatePoisoned() =>
        PoisonReasons.TryGetValue(this, out Func<PoisonException>? reason) ? reason() : ThrowHelper.CreatePoisoned(Kind);

    private void SetPoisonLocked(Waiter<T>? chain)
    {
        AssertLockHeld();
        for (; chain is not null; chain = chain.Next)
        {
            chain.Item = default;
            chain.Error = CreatePoisoned();
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

    // ---- cancellation ----------------------------------------------------------

    // Explicit: the interface is internal, and its members must not join the public surface.
    bool IWaiterOwner<T>.TryCancel(Waiter<T> waiter)
    {
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            bool cancelled = waiter.IsReader ? _readers.TryCancel(waiter, out _) : _writers.TryCancel(waiter, out _);
            AssertInvariants();
            return cancelled;
        }
    }

    // ---- the hand-over, under the lock --------------------------------------------------------

    /// <summary>
    /// Takes an item from the buffer or a parked writer. <paramref name="self"/>: the caller's own
    /// alternation, whose offers it must not take. <paramref name="plainOnly"/>: take only from a
    /// plain writer (an enabling alternation cannot claim another alternation, see
    /// <see cref="EnableInput"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryTakeLocked(object? self, bool plainOnly, out T item, out Waiter<T>? partner)
    {
        AssertLockHeld();
        if (TakesHeldBackLocked())
        {
            item = default!;
            partner = null;
            return false;
        }

        if (_buffer is { } buffer && buffer.Count > 0)
        {
            item = buffer.Take();
            _hasBuffered = buffer.Count > 0;

            // A slot is free now: move one parked writer's item in, which completes its write.
            // The reader already has its item, so once claimed here, the writer must be woken
            // whatever Put does.
            partner = plainOnly ? _writers.DequeuePlain() : _writers.DequeueClaimed(self);
            if (partner is not null)
            {
                RefillLocked(buffer, partner);
            }

            CoreMetrics.CountCommunication(_shape);
            return true;
        }

        partner = plainOnly ? _writers.DequeuePlain() : _writers.DequeueClaimed(self);
        if (partner is not null)
        {
            item = partner.Item!;
            partner.Item = default;
            CoreMetrics.CountCommunication(_shape);
            return true;
        }

        item = default!;
        return false;
    }

#pragma warning disable CA1031 // The buffer's exception is handed to the writer whose value it refused.
    private void RefillLocked(IBuffer<T> buffer, Waiter<T> writer)
    {
        AssertLockHeld();
        try
        {
            buffer.Put(writer.Item!);
            _hasBuffered = buffer.Count > 0;
        }
        catch (Exception e)
        {
            writer.Error = e;
        }

        writer.Item = default;
    }
#pragma warning restore CA1031

    /// <summary>
    /// Hands an item to a parked reader, or stores it in the buffer if there is room; see
    /// <see cref="TryTakeLocked"/>. A reader gets the item directly only while the buffer is empty:
    /// see <see cref="MayHandToReaderLocked"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryPutLocked(T item, object? self, bool plainOnly, out Waiter<T>? partner)
    {
        AssertLockHeld();
        partner = !MayHandToReaderLocked() ? null : plainOnly ? _readers.DequeuePlain() : _readers.DequeueClaimed(self);
        if (partner is not null)
        {
            partner.Item = item;
            CoreMetrics.CountCommunication(_shape);
            return true;
        }

        if (_buffer is { } buffer && !IsFullLocked(buffer))
        {
            buffer.Put(item);
            _hasBuffered = buffer.Count > 0;
            return true;
        }

        return false;
    }

    /// <summary>
    /// Whether a value being put may go straight to a parked reader: only while nothing is buffered.
    /// Plain readers park only on an empty buffer, but an alternation's reader may stay parked
    /// beside buffered values: an enabling alternation (which cannot claim another one), a
    /// reservation or a released hold put them there and only signalled it to scan again. Until it
    /// withdraws, it is still claimable; handing it a later value would overtake the buffered ones,
    /// so the later value queues behind them and the reader takes the oldest in its scan.
    /// </summary>
    /// <remarks>
    /// Nor while a hold has a buffered value out (<see cref="TakesHeldBackLocked"/>): it may come back.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool MayHandToReaderLocked()
    {
        AssertLockHeld();
        return _buffer is not { } buffer || (buffer.Count == 0 && !TakesHeldBackLocked());
    }

    /// <summary>
    /// Whether reads must wait because a hold has a buffered value out: it may be released back to
    /// the front, so nothing behind it (a buffered value, a writer's) may be handed to any reader
    /// or hold meanwhile, or a reader would see a later value before it. The commit or release of
    /// the hold serves the readers parked meanwhile. The poison does not end this: a reader parked
    /// (or arriving) meanwhile stays parked, since the held value may come back to it, and gets
    /// the poison only once the hold settles with nothing left to read.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TakesHeldBackLocked()
    {
        AssertLockHeld();
        return _buffer is FrontSlotBuffer<T> { HeldOut: > 0 };
    }

    /// <summary>
    /// Whether a read that cannot claim another alternation could take something now: a buffered
    /// item, a plain parked writer, or the poison (an enabling alternation and a hold see only these).
    /// </summary>
    private bool ReadableWithoutOffersLocked()
    {
        AssertLockHeld();
        return !TakesHeldBackLocked() && (_poisoned || (_buffer is { } buffer && buffer.Count > 0) || _writers.HasPlain());
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ThrowIfCannotParkLocked(bool isReader, object? self)
    {
        AssertLockHeld();
        if (_poisoned && !(isReader && TakesHeldBackLocked()))
        {
            throw CreatePoisoned();
        }

        // A One end has exactly one process on it; a second party parked beside the first
        // means the program shares an end it should not. Say so rather than misbehave. (A
        // reservation's watcher among the writers is no party: checked only when something is there.)
        if (isReader ? SingleReader && _readers.HasOtherThan(self) : SingleWriter && _writers.HasOtherThan(self) && _writers.HasPartyOtherThan(self))
        {
            ThrowHelper.ThrowSharedOneEnd(Kind, isReader);
        }
    }

    /// <summary>The first statement of every method named *Locked (CONTRIBUTING.md): <c>Debug.Assert(Monitor.IsEntered(this))</c>.</summary>
    [Conditional("DEBUG")]
    private void AssertLockHeld() => Debug.Assert(Monitor.IsEntered(this), "Methods named *Locked run under the channel lock.");

    /// <summary>
    /// Checks the channel's state (DEBUG builds, under the lock). Plain parties are never parked on
    /// both sides at once, nor beside a buffer that could serve them; waiters of an alternation may
    /// briefly sit beside a partner they cannot pair with, until that alternation withdraws them.
    /// </summary>
    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        AssertLockHeld();
        bool plainReaders = _readers.HasPlain();
        bool plainWriters = _writers.HasPlain();
        bool heldBack = TakesHeldBackLocked();
        Debug.Assert(!(plainReaders && plainWriters) || heldBack, "Plain readers and writers are never parked at the same time (but while a held value may come back).");
        Debug.Assert(!plainReaders || _buffer is null || _buffer.Count == 0 || heldBack, "Readers park only on an empty buffer (or while a held value may come back).");
        Debug.Assert(!plainWriters || _buffer is null || IsFullLocked(_buffer), "Writers park only on a full buffer.");
        Debug.Assert(!_poisoned || ((_readers.IsEmpty || heldBack) && _writers.IsEmpty), "Nobody stays parked on a poisoned channel (but readers while a held value may come back).");
        Debug.Assert(_buffer is null || _hasBuffered == (_buffer.Count > 0), "The buffered hint matches the buffer.");
        AssertReservations();
    }

    internal string DebuggerDisplay
    {
        get
        {
            ControlPoint.BeforeLock(this);
            lock (this)
            {
                return $"{Kind}: {(_buffer is null ? "unbuffered" : $"{_buffer.Count} buffered, {_reserved} reserved")}, " +
                    $"{_readers.Count} readers and {_writers.Count} writers waiting{(_poisoned ? ", poisoned" : "")}";
            }
        }
    }
}
