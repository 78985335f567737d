using System.Threading.Channels;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// Packs the small client frames already queued behind one another into one gRPC message
/// (link.proto, FrameBatch), so a writer streaming small values pays gRPC's per-message cost
/// (framing, the HTTP/2 stream's write, the home's parse and dispatch) once per batch.
/// </summary>
/// <remarks>
/// Nothing waits for a batch to fill: only frames that are queued when the pump is free to write
/// are gathered, so a lone frame leaves as soon as it would have without batching. Frames with large
/// data go alone, so that the receiver's pooled-buffer parse (<see cref="LinkMarshaller"/>) still
/// applies to them and a batch never approaches the message size limit.
/// </remarks>
internal static class FrameBatching
{
    /// <summary>The most frames in one batch.</summary>
    internal const int MaxFrames = 64;

    /// <summary>The most encoded bytes in one batch (the frames' own sizes, summed).</summary>
    internal const int MaxBytes = 16 << 10;

    /// <summary>Frames larger than this (encoded) are never batched.</summary>
    internal const int MaxFrameBytes = 2 << 10;

    /// <summary>
    /// <paramref name="first"/> alone, or a batch of it and the small frames queued right behind it
    /// in <paramref name="queue"/> (taken from the queue, in order).
    /// </summary>
    internal static ClientFrame Gather(ClientFrame first, ChannelReader<ClientFrame> queue)
    {
        if (!queue.TryPeek(out ClientFrame? next) || !IsSmall(next, out int nextSize) || !IsSmall(first, out int size))
        {
            return first;
        }

        var batch = new FrameBatch();
        batch.Frames.Add(first);
        do
        {
            queue.TryRead(out _); // the frame just peeked: the pump is the queue's only reader
            batch.Frames.Add(next);
            size += nextSize;
        }
        while (batch.Frames.Count < MaxFrames && queue.TryPeek(out next) && IsSmall(next, out nextSize) && size + nextSize <= MaxBytes);

        return new ClientFrame { Batch = batch };
    }

    /// <summary>How many credited Write frames <paramref name="frame"/> carries (in a batch or alone).</summary>
    internal static int CreditedWrites(ClientFrame frame)
    {
        if (frame.BodyCase == ClientFrame.BodyOneofCase.Write)
        {
            return frame.Write is { Credited: true, Lane: false } ? 1 : 0;
        }

        int count = 0;
        if (frame.BodyCase == ClientFrame.BodyOneofCase.Batch)
        {
            foreach (ClientFrame inner in frame.Batch.Frames)
            {
                if (inner.BodyCase == ClientFrame.BodyOneofCase.Write && inner.Write is { Credited: true, Lane: false })
                {
                    count++;
                }
            }
        }

        return count;
    }

    private static bool IsSmall(ClientFrame frame, out int size)
    {
        size = frame.CalculateSize();
        return size <= MaxFrameBytes && frame.BodyCase != ClientFrame.BodyOneofCase.Hello;
    }
}
