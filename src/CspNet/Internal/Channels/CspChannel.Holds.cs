using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;
using CspNet.Internal.Scheduling;

namespace CspNet;

// Holds: a value set aside for a reader that is not in this program (a remote selecting reader,
// see docs/DISTRIBUTED.md) until its selection decides. Used only by the distributed layer.
//
// A hold takes the value a read would take, from the buffer or from a parked plain writer, but
// the writer is claimed without being woken: its write is not complete until the hold is
// Committed. Release undoes the hold: the writer is parked again,
// first in line, or the buffered item goes back in front of the buffer; readers parked
// meanwhile are served as a write would serve them.
//
// While a buffered item is held, nothing behind it is handed out (TakesHeldBackLocked): neither
// another buffered item nor a writer's, to a reader, an alternation or another hold. Otherwise a
// reader could take a later value, and then the released one (it sees 0, 2, 1). Readers park
// meanwhile, and the commit or release serves them in order (ServeParkedReadersLocked). The price:
// reads of a channel wait while a remote selecting reader decides on its front value. A held
// writer needs no such rule: its write is not complete, so it writes nothing behind the held value.
//
// Offers parked by another alternation's output guard are not held: claiming one commits that
// alternation irrevocably, so a hold could not give it back. A hold therefore sees plain writers
// and the buffer only; a selecting writer is still read by plain reads (local or remote).
//
// Nothing here adds a field to the channel: a hold is an object of its own, a watch is a waiter
// in the readers' queue (ReadinessWatcher{T}), and the front slot a released
// buffered item needs wraps the buffer only once a hold has been released on it.
public abstract partial class CspChannel<T>
{
    /// <summary>
    /// Whether a hold could take something now: a buffered item, a plain parked writer, or the
    /// poison. Offers of other alternations do not count (see the remarks of this class).
    /// </summary>
    private bool HoldableLocked()
    {
        AssertLockHeld();
        return ReadableWithoutOffersLocked();
    }

    /// <summary>
    /// Sets one value aside at once if there is one; null if there is none. Throws
    /// <see cref="PoisonException"/> once the channel is poisoned and drained.
    /// </summary>
    internal ChannelHold<T>? TryHold()
    {
        Waiter<T>? refilled = null;
        ChannelHold<T>? hold;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (TakesHeldBackLocked())
            {
                hold = null;
            }
            else if (_buffer is { } buffer && buffer.Count > 0)
            {
                // The front slots take the item back if the hold is released, and count it out
                // meanwhile. The sequence number orders released items among themselves (after a
                // poison, several may be out): holds take in order, so the numbers rise in take order.
                var front = buffer as FrontSlotBuffer<T> ?? new FrontSlotBuffer<T>(buffer);
                _buffer = front;
                T item = front.Take(out long sequence);
                front.HeldOut++;
                _hasBuffered = front.Count > 0;

                // As a read: the freed slot is refilled at once, which completes that writer's
                // write (its value is in the buffer now, whatever becomes of the hold).
                refilled = _writers.DequeueClaimed();
                if (refilled is not null)
                {
                    RefillLocked(front, refilled);
                }

                hold = new ChannelHold<T>(this, item, writer: null, sequence);
            }
            else if (_writers.DequeuePlain() is { } writer)
            {
                // Claimed (its cancellation cannot win now) but not woken: the write is not done.
                hold = new ChannelHold<T>(this, writer.Item!, writer, sequence: 0);
            }
            else if (_poisoned)
            {
                throw CreatePoisoned();
            }
            else
            {
                hold = null;
            }

            AssertInvariants();
        }

        refilled?.Wake();
        return hold;
    }

    /// <summary>
    /// Sets one value aside, waiting (without a thread) until there is one. Cancelling it is exact:
    /// a cancelled hold holds nothing.
    /// </summary>
    internal async ValueTask<ChannelHold<T>> HoldAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (TryHold() is { } hold)
            {
                return hold;
            }

            // A watch fires on every event that may make a hold possible; another reader may have
            // taken the value first, so the loop tries again (once per such event: no polling).
            await WhenHoldableAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Completes when a hold could take something (a buffered item, a plain parked writer, the
    /// poison), at once if it could now. Takes nothing. For shared reading ends only: the watch
    /// parks a waiter among the readers, which a single-reader channel would take for a second reader.
    /// </summary>
    internal async ValueTask WhenHoldableAsync(CancellationToken cancellationToken)
    {
        Debug.Assert(!SingleReader, "Watches are for channels with a shared reading end.");
        ReadinessWatcher<T> watcher;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            if (HoldableLocked())
            {
                return;
            }

            watcher = new ReadinessWatcher<T>();
            _readers.Enqueue(watcher, isReader: true);
        }

        await AwaitWatcherAsync(watcher, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Waits for a queued watcher to fire (or the wait to be cancelled), then takes it out of its queue.</summary>
    private async ValueTask AwaitWatcherAsync(ReadinessWatcher<T> watcher, CancellationToken cancellationToken)
    {
        try
        {
            using (cancellationToken.UnsafeRegister(static s => ((ReadinessWatcher<T>)s!).Cancel(), watcher))
            {
                await watcher.Fired.ConfigureAwait(false);
            }
        }
        finally
        {
            // A watcher fired by SignalSelections (a value put in the buffer, or room made, by an
            // enabling alternation) or cancelled is still queued: take it out.
            ControlPoint.BeforeLock(this);
            lock (this)
            {
                if (watcher.IsReader)
                {
                    _readers.Remove(watcher);
                }
                else
                {
                    _writers.Remove(watcher);
                }
            }
        }
    }

    /// <summary>
    /// The hold's reader took the value: a held writer's write completes now. A value held from a
    /// channel poisoned since was taken before the poison, so the commit stands.
    /// </summary>
    internal static void Commit(ChannelHold<T> hold)
    {
        if (hold.Settle() is { } writer)
        {
            writer.Item = default;
            writer.Wake();
        }
        else if (!hold.FromWriter && !hold.IsSettledTwice)
        {
            hold.Channel.EndBufferedHold(hold, giveBack: false);
        }
    }

    /// <summary>
    /// Gives a held value back exactly where it was: a held writer parks again first in line (or
    /// pairs with a reader that parked meanwhile); a buffered item goes back in front of the
    /// buffer. On a channel poisoned meanwhile, a held writer fails with the poison (its write did
    /// not happen) and a buffered item stays readable, as buffered items do after poison. A
    /// writer whose cancellation was asked for while it was held is cancelled now.
    /// </summary>
    internal void Release(ChannelHold<T> hold)
    {
        Waiter<T>? writer = hold.Settle();
        if (hold.IsSettledTwice)
        {
            return;
        }

        if (writer is null)
        {
            // A buffered item goes back in front of the buffer, and the readers parked meanwhile
            // take it and what follows, in order.
            EndBufferedHold(hold, giveBack: true);
            return;
        }

        Waiter<T>? reader = null;
        Waiter<T>? wake = null;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (_poisoned || writer.CancellationRequested)
            {
                writer.Item = default;
                writer.Error = _poisoned ? CreatePoisoned() : writer.CreateCancellation();
                wake = writer;
            }
            else if (TryPutLocked(writer.Item!, self: null, plainOnly: false, out reader))
            {
                // A reader parked while the writer was held: it takes the value as it would
                // have from the writer, and the write completes.
                writer.Item = default;
                wake = writer;
            }
            else
            {
                writer.Unclaim();
                _writers.EnqueueFront(writer, isReader: false);
            }

            AssertInvariants();
        }

        reader?.Wake();
        wake?.Wake();
    }

    /// <summary>
    /// Ends the hold of a buffered item: it goes back in front of the buffer (<paramref name="giveBack"/>)
    /// or is gone for good; either way, reads held back by it (<see cref="TakesHeldBackLocked"/>) may go on.
    /// </summary>
    private void EndBufferedHold(ChannelHold<T> hold, bool giveBack)
    {
        List<Waiter<T>> wake = [];
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            var front = (FrontSlotBuffer<T>)_buffer!;
            front.HeldOut--;
            if (giveBack)
            {
                front.PutBack(hold.Item, hold.Sequence);
                _hasBuffered = true;
            }

            ServeParkedReadersLocked(wake);
            AssertInvariants();
        }

        foreach (Waiter<T> waiter in wake)
        {
            waiter.Wake();
        }
    }

    /// <summary>
    /// Once reads are no longer held back: hands buffered items to the readers that parked beside
    /// them, in order, refilling the buffer from parked writers as reads do, and tells the
    /// alternations still parked on either side to scan again (they may pair now).
    /// </summary>
    private void ServeParkedReadersLocked(List<Waiter<T>> wake)
    {
        AssertLockHeld();
        if (TakesHeldBackLocked())
        {
            return;
        }

        while (_buffer!.Count > 0 && _readers.DequeueClaimed() is { } reader)
        {
            bool took = TryTakeLocked(self: null, plainOnly: false, out T item, out Waiter<T>? writer);
            Debug.Assert(took, "Reads are not held back and the buffer holds an item.");
            reader.Item = item;
            wake.Add(reader);
            if (writer is not null)
            {
                wake.Add(writer);
            }
        }

        // On a poisoned channel, readers left with nothing to read get the poison now.
        if (_poisoned && _buffer.Count == 0)
        {
            Waiter<T>? poisoned = _readers.DetachAllClaimed();
            SetPoisonLocked(poisoned);
            while (poisoned is { } reader)
            {
                poisoned = reader.Next;
                reader.Next = null;
                wake.Add(reader);
            }
        }

        _readers.SignalSelections(except: null);
        _writers.SignalSelections(except: null);
    }
}
