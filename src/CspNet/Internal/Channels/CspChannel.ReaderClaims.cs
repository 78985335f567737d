using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;
using CspNet.Internal.Scheduling;

namespace CspNet;

// Reader claims: a parked plain reader set aside for a writer that is not in this program (a
// remote output guard, see docs/DISTRIBUTED.md) until its selection decides. Used only by the
// distributed layer. The mirror of a hold of a parked writer (CspChannel.Holds.cs).
//
// A claim takes the reader a write would hand its value to, but does not complete its read:
// Deliver hands it the value later; Release gives it back, first in line, or pairs it with a
// writer that parked meanwhile, as a read would. Its cancellation cannot win while it is claimed;
// a cancellation asked for meanwhile completes when the claim is released.
//
// Readers parked by an alternation are not claimed: claiming one commits that alternation
// irrevocably, so a claim could not give it back. A claim therefore sees plain readers only;
// selecting readers still take a remote offer's value once it is written plainly.
public abstract partial class CspChannel<T>
{
    /// <summary>
    /// Sets one parked plain reader aside if a write could hand it a value now (nothing buffered in
    /// front of it), or returns null. Throws <see cref="PoisonException"/> once the channel is poisoned.
    /// </summary>
    internal ReaderClaim<T>? TryClaimReader()
    {
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (_poisoned)
            {
                throw CreatePoisoned();
            }

            ReaderClaim<T>? claim = MayHandToReaderLocked() && _readers.DequeuePlain() is { } reader
                ? new ReaderClaim<T>(this, reader)
                : null;
            AssertInvariants();
            return claim;
        }
    }

    /// <summary>
    /// Completes when a reader claim could succeed now (a plain reader is parked and nothing is
    /// buffered in front of it) or the channel is poisoned; at once if so already. Claims nothing.
    /// </summary>
    internal async ValueTask WhenReaderClaimableAsync(CancellationToken cancellationToken)
    {
        ReadinessWatcher<T> watcher;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            if (_poisoned || (MayHandToReaderLocked() && _readers.HasPlain()))
            {
                return;
            }

            // Among the writers: a reader that arrives tries to pair with them, which fires it.
            watcher = new ReadinessWatcher<T>();
            _writers.Enqueue(watcher, isReader: false);
        }

        await AwaitWatcherAsync(watcher, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Hands <paramref name="item"/> to the claimed reader: its read completes now with it. A claim
    /// made before a poison stands, as a committed hold does.
    /// </summary>
    internal void Deliver(ReaderClaim<T> claim, T item)
    {
        if (claim.Settle() is { } reader)
        {
            ControlPoint.BeforeStateChange();
            reader.Item = item;
            CoreMetrics.CountCommunication(_shape);
            reader.Wake();
        }
    }

    /// <summary>
    /// Gives a claimed reader back: it pairs with a value that came meanwhile (a buffered one, a
    /// parked writer's), as a read would, or parks again first in line. On a channel poisoned
    /// meanwhile it fails with the poison; a reader whose cancellation was asked for meanwhile is
    /// cancelled now.
    /// </summary>
    internal void Release(ReaderClaim<T> claim)
    {
        if (claim.Settle() is not { } reader)
        {
            return;
        }

        Waiter<T>? writer = null;
        Waiter<T>? wake = null;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            if (reader.CancellationRequested)
            {
                reader.Error = reader.CreateCancellation();
                wake = reader;
            }
            else if (TryTakeLocked(self: null, plainOnly: false, out T item, out writer))
            {
                reader.Item = item;
                wake = reader;
            }
            else if (_poisoned)
            {
                reader.Error = CreatePoisoned();
                wake = reader;
            }
            else
            {
                reader.Unclaim();
                _readers.EnqueueFront(reader, isReader: true);

                // Offers of alternations parked meanwhile may pair with it now (in their next scan).
                _writers.SignalSelections(except: null);
            }

            AssertInvariants();
        }

        writer?.Wake();
        wake?.Wake();
    }
}
