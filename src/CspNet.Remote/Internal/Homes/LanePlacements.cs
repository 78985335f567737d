using System;
using System.Threading;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// The OK answers of a stream's credited lane values, gathered into <see cref="LanePlaced"/>
/// frames (link.proto) for a client that takes them: a burst of values costs one answer, not one
/// <c>Completed</c> each.
/// </summary>
/// <remarks>
/// A placed op waits in the batch only while the home is still placing values that have come: the
/// batch goes out as soon as every credited lane value still open waits for its bytes (so no
/// answer waits on the network, and a leaving writer, which sends nothing more, hears every answer
/// at once), or when it names <see cref="MaxOpsPerFrame"/> values or <see cref="MaxBytesPerFrame"/>
/// bytes (the writer keeps a value's bytes until its answer comes, so a steady stream gets its
/// bytes back in bounded steps). Thread-safe: ends' placements run concurrently.
/// </remarks>
internal sealed class LanePlacements(Action<LanePlaced> send)
{
    /// <summary>The most op ids in one frame.</summary>
    internal const int MaxOpsPerFrame = 64;

    /// <summary>The most value bytes one frame answers for (the writer holds them until then).</summary>
    internal const long MaxBytesPerFrame = 8L << 20;

    private readonly Lock _lock = new();
    private LanePlaced? _batch;
    private long _batchBytes;
    private int _open;    // credited lane Writes not yet placed or given up
    private int _waiting; // of those, the ones whose placing waits for bytes (on the lane or sent again on the link)

    /// <summary>A credited lane Write came: its answer is owed.</summary>
    internal void Opened()
    {
        lock (_lock)
        {
            _open++;
        }
    }

    /// <summary>A value's turn came and its bytes have not: what is gathered goes out now.</summary>
    internal void Waiting()
    {
        LanePlaced? due;
        lock (_lock)
        {
            _waiting++;
            due = TakeIfDue();
        }

        Send(due);
    }

    /// <summary>The bytes <see cref="Waiting"/> waited for came (or the wait ended).</summary>
    internal void Arrived()
    {
        lock (_lock)
        {
            _waiting--;
        }
    }

    /// <summary>Op <paramref name="opId"/> was placed: its OK joins the batch.</summary>
    internal void Placed(ulong opId, int bytes)
    {
        LanePlaced? due;
        lock (_lock)
        {
            _batch ??= new LanePlaced();
            _batch.OpIds.Add(opId);
            _batchBytes += bytes;
            _open--;
            due = TakeIfDue();
        }

        Send(due);
    }

    /// <summary>Op ended without a place in the batch (answered on its own, or lost with its stream).</summary>
    internal void Ended()
    {
        LanePlaced? due;
        lock (_lock)
        {
            _open--;
            due = TakeIfDue();
        }

        Send(due);
    }

    private LanePlaced? TakeIfDue()
    {
        if (_batch is not { } batch || (_open > _waiting && batch.OpIds.Count < MaxOpsPerFrame && _batchBytes < MaxBytesPerFrame))
        {
            return null;
        }

        _batch = null;
        _batchBytes = 0;
        return batch;
    }

    private void Send(LanePlaced? due)
    {
        if (due is not null)
        {
            send(due);
        }
    }
}
