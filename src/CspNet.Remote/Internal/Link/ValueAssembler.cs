using System;
using System.Buffers;
using System.Collections.Generic;
using Google.Protobuf;

namespace CspNet.Remote.Internal;

/// <summary>
/// Collects the parts of one value as they arrive (Chunk frames, then the inline data of the
/// closing frame) and presents them as one <see cref="ReadOnlySequence{T}"/> without copying: the
/// codecs read multi-segment sequences directly.
/// </summary>
/// <remarks>Not thread-safe: one frame loop owns it.</remarks>
internal sealed class ValueAssembler
{
    private readonly long _maxSize;
    private List<ReadOnlyMemory<byte>>? _parts;
    private long _length;

    internal ValueAssembler(long maxSize) => _maxSize = maxSize;

    /// <summary>Adds a part; false if the value would exceed the size limit.</summary>
    internal bool TryAdd(ByteString part)
    {
        _length += part.Length;
        if (_length > _maxSize)
        {
            return false;
        }

        if (part.Length > 0)
        {
            (_parts ??= new List<ReadOnlyMemory<byte>>(4)).Add(part.Memory);
        }

        return true;
    }

    internal long Length => _length;

    /// <summary>The value made of the parts added so far followed by <paramref name="last"/>.</summary>
    internal static ReadOnlySequence<byte> Complete(ValueAssembler? chunks, ByteString last)
    {
        if (chunks?._parts is not { Count: > 0 } parts)
        {
            return new ReadOnlySequence<byte>(last.Memory);
        }

        if (last.Length > 0)
        {
            parts.Add(last.Memory);
        }

        if (parts.Count == 1)
        {
            return new ReadOnlySequence<byte>(parts[0]);
        }

        var first = new Segment(parts[0], 0);
        Segment tail = first;
        for (int i = 1; i < parts.Count; i++)
        {
            tail = tail.Append(parts[i]);
        }

        return new ReadOnlySequence<byte>(first, 0, tail, tail.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        internal Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        internal Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
