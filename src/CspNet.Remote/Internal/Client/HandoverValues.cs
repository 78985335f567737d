using System;
using System.Collections.Generic;
using System.IO;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// The buffered values a leaving home sends before it offers a channel (link.proto, HandoverValue),
/// held by name until the Handover comes. Bounded: a value at most <c>maxValueSize</c> bytes, all
/// the values held at most <c>maxBytes</c>; past either the offer is refused (its values dropped).
/// Used by the link's reading loop only.
/// </summary>
internal sealed class HandoverValues(long maxValueSize, long maxBytes)
{
    /// <summary>Values between two acknowledgements (HandoverProgress) at most.</summary>
    internal const int AcknowledgeEveryValues = 256;

    /// <summary>Bytes between two acknowledgements at most (a value's last part may go past it).</summary>
    internal const long AcknowledgeEveryBytes = 256 << 10;

    private readonly Dictionary<string, Pending> _byName = new(StringComparer.Ordinal);
    private long _held;

    /// <summary>
    /// Tests only, by channel name: called on the link's reading loop with the count of each value
    /// that came whole, so that a test can make this program a slow taker.
    /// </summary>
    internal static System.Collections.Concurrent.ConcurrentDictionary<string, Action<int>> SlowTakerForTests { get; } = new(StringComparer.Ordinal);

    /// <summary>Tests only, by channel name: called when an offer of that home comes; this program takes it only once the task returned completes.</summary>
    internal static System.Collections.Concurrent.ConcurrentDictionary<string, Func<System.Threading.Tasks.Task>> DelayedTakeForTests { get; } = new(StringComparer.Ordinal);

    /// <summary>
    /// Adds one part of a value (its bytes are copied: the frame's array goes back to the pool);
    /// returns the acknowledgement to send the leaving home now (link.proto, HandoverProgress), if one is due.
    /// </summary>
    internal HandoverProgress? Add(HandoverValue part)
    {
        if (!_byName.TryGetValue(part.Name, out Pending? pending))
        {
            _byName[part.Name] = pending = new Pending();
        }

        if (pending.Refusal is not null)
        {
            return null;
        }

        long length = pending.Current.Length + part.Data.Length;
        if (length > maxValueSize || _held + part.Data.Length > maxBytes)
        {
            Drop(pending, length > maxValueSize
                ? $"a value of the buffer is larger than the {maxValueSize:N0} bytes this program accepts (CspNodeOptions.MaxValueSize)"
                : $"the buffer's values are more than the {maxBytes:N0} bytes this program holds for one link (CspNodeOptions.MaxBytesPerLink)");
            return null;
        }

        _held += part.Data.Length;
        pending.Current.Write(part.Data.Span);
        pending.UnacknowledgedBytes += part.Data.Length;
        if (part.More)
        {
            return null;
        }

        pending.Values.Add(pending.Current.ToArray());
        pending.Current.SetLength(0);
        if (SlowTakerForTests.TryGetValue(part.Name, out Action<int>? slow))
        {
            slow(pending.Values.Count);
        }

        if (pending.Values.Count - pending.Acknowledged < AcknowledgeEveryValues && pending.UnacknowledgedBytes < AcknowledgeEveryBytes)
        {
            return null;
        }

        pending.Acknowledged = pending.Values.Count;
        pending.UnacknowledgedBytes = 0;
        return new HandoverProgress { Name = part.Name, Values = pending.Values.Count };
    }

    /// <summary>The values that came for <paramref name="handover"/>, in order; throws, saying why, if they are not all there.</summary>
    internal IReadOnlyList<byte[]> Take(Handover handover)
    {
        if (!_byName.Remove(handover.Name, out Pending? pending))
        {
            pending = new Pending();
        }

        foreach (byte[] value in pending.Values)
        {
            _held -= value.Length;
        }

        _held -= pending.Current.Length;
        if (pending.Refusal is { } refusal)
        {
            throw new InvalidOperationException($"The buffer of '{handover.Name}' cannot move here: {refusal}.");
        }

        if (pending.Values.Count != handover.ValueCount || pending.Current.Length != 0)
        {
            throw new InvalidDataException($"The home of '{handover.Name}' offered {handover.ValueCount} buffered values, and {pending.Values.Count} came whole.");
        }

        return pending.Values;
    }

    private void Drop(Pending pending, string why)
    {
        foreach (byte[] value in pending.Values)
        {
            _held -= value.Length;
        }

        _held -= pending.Current.Length;
        pending.Values.Clear();
        pending.Current.SetLength(0);
        pending.Refusal = why;
    }

    private sealed class Pending
    {
        internal List<byte[]> Values { get; } = [];

        internal MemoryStream Current { get; } = new();

        internal string? Refusal { get; set; }

        internal int Acknowledged { get; set; }

        internal long UnacknowledgedBytes { get; set; }
    }
}
