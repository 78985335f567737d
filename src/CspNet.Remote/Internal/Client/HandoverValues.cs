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
    private readonly Dictionary<string, Pending> _byName = new(StringComparer.Ordinal);
    private long _held;

    /// <summary>Adds one part of a value (its bytes are copied: the frame's array goes back to the pool).</summary>
    internal void Add(HandoverValue part)
    {
        if (!_byName.TryGetValue(part.Name, out Pending? pending))
        {
            _byName[part.Name] = pending = new Pending();
        }

        if (pending.Refusal is not null)
        {
            return;
        }

        long length = pending.Current.Length + part.Data.Length;
        if (length > maxValueSize || _held + part.Data.Length > maxBytes)
        {
            Drop(pending, length > maxValueSize
                ? $"a value of the buffer is larger than the {maxValueSize:N0} bytes this program accepts (CspNodeOptions.MaxValueSize)"
                : $"the buffer's values are more than the {maxBytes:N0} bytes this program holds for one link (CspNodeOptions.MaxBytesPerLink)");
            return;
        }

        _held += part.Data.Length;
        pending.Current.Write(part.Data.Span);
        if (!part.More)
        {
            pending.Values.Add(pending.Current.ToArray());
            pending.Current.SetLength(0);
        }
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
    }
}
