using System;
using System.Diagnostics;
using System.Threading;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// The credits a remote writing end holds: slots of the home's buffer reserved for its values
/// (link.proto, Credit). Granted by the link's reader, spent by the end's writers, any number of
/// them at once.
/// </summary>
/// <remarks>
/// A plain write (one without a credit) may spend one of the end's credits at the home, if the
/// home has granted some that had not reached here when the write was sent; the home says so in
/// its answer. So while plain writes are in flight, as many credits are kept back, and the end's
/// writers decide and send under <see cref="Gate"/>: a credited write then always finds its credit
/// at the home (the argument is in link.proto, Credit).
/// </remarks>
internal sealed class WriteCredits
{
    private int _available;
    private int _plainInFlight;
    private int _heldForOffers;     // credits selections took for offers, not yet sent or given back
    private bool _stopped;          // the home is moving: no credit is spent any more
    private Action? _whenStopped;   // answers the stop once no offer holds a credit
    private volatile string? _poisoned;

    /// <summary>Held while a writer decides between a credited and a plain write and queues its frames.</summary>
    internal Lock Gate { get; } = new();

    /// <summary>Why writes on the end fail from now on (the channel is poisoned), or null.</summary>
    internal string? Poisoned => _poisoned;

    internal void Grant(int count)
    {
        lock (Gate)
        {
            if (!_stopped)
            {
                _available += count;
            }
        }
    }

    /// <summary>Spends one credit if one is free of the plain writes in flight; under <see cref="Gate"/>.</summary>
    internal bool TryTakeLocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "TryTakeLocked is called under Gate.");
        if (_stopped || _available - _plainInFlight <= 0)
        {
            return false;
        }

        _available--;
        return true;
    }

    /// <summary>As <see cref="TryTakeLocked"/>, for a selection's offer: the credit is held until the offer is sent or given back.</summary>
    internal bool TryTakeForOfferLocked()
    {
        if (!TryTakeLocked())
        {
            return false;
        }

        _heldForOffers++;
        return true;
    }

    /// <summary>An offer's credit was spent (its credited Write is queued); under <see cref="Gate"/>.</summary>
    internal void OfferSentLocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "OfferSentLocked is called under Gate.");
        _heldForOffers--;
        AnswerStopIfDoneLocked();
    }

    /// <summary>
    /// The home is moving (link.proto, StopCredits): no credit is spent from now on, and
    /// <paramref name="answer"/> runs, under <see cref="Gate"/>, once no selection holds one for an
    /// offer (at once if none does), so that it is queued behind every credited Write of the end.
    /// </summary>
    internal void Stop(Action answer)
    {
        lock (Gate)
        {
            _stopped = true;
            _available = 0;
            _whenStopped = answer;
            AnswerStopIfDoneLocked();
        }
    }

    private void AnswerStopIfDoneLocked()
    {
        if (_stopped && _heldForOffers == 0 && _whenStopped is { } answer)
        {
            _whenStopped = null;
            answer();
        }
    }

    /// <summary>Whether a credit is free of the plain writes in flight now (a hint: another writer of the end may take it first).</summary>
    internal bool HasFree
    {
        get
        {
            lock (Gate)
            {
                return _available - _plainInFlight > 0;
            }
        }
    }

    /// <summary>Gives back a credit taken for an offer its selection did not choose; under <see cref="Gate"/>.</summary>
    internal void ReturnLocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "ReturnLocked is called under Gate.");
        _heldForOffers--;
        if (!_stopped)
        {
            _available++;
        }

        AnswerStopIfDoneLocked();
    }

    /// <summary>A plain write (or a reservation for an offer) is sent; under <see cref="Gate"/>.</summary>
    internal void BeginPlainLocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "BeginPlainLocked is called under Gate.");
        _plainInFlight++;
    }

    /// <summary>A plain write was answered (or its link lost): <paramref name="creditUsed"/> if the home spent a credit on it.</summary>
    internal void EndPlain(bool creditUsed)
    {
        lock (Gate)
        {
            _plainInFlight--;
            if (creditUsed && !_stopped)
            {
                _available--;
            }
        }
    }

    /// <summary>The channel is poisoned: later writes fail without spending credits.</summary>
    internal void Poison(string message) => _poisoned ??= message;
}
