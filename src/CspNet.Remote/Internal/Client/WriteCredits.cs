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
    private volatile string? _poisoned;

    /// <summary>Held while a writer decides between a credited and a plain write and queues its frames.</summary>
    internal Lock Gate { get; } = new();

    /// <summary>Why writes on the end fail from now on (the channel is poisoned), or null.</summary>
    internal string? Poisoned => _poisoned;

    internal void Grant(int count)
    {
        lock (Gate)
        {
            _available += count;
        }
    }

    /// <summary>Spends one credit if one is free of the plain writes in flight; under <see cref="Gate"/>.</summary>
    internal bool TryTakeLocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "TryTakeLocked is called under Gate.");
        if (_available - _plainInFlight <= 0)
        {
            return false;
        }

        _available--;
        return true;
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
        _available++;
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
            if (creditUsed)
            {
                _available--;
            }
        }
    }

    /// <summary>The channel is poisoned: later writes fail without spending credits.</summary>
    internal void Poison(string message) => _poisoned ??= message;
}
