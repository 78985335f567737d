using System;
using System.Buffers;
using System.Collections.Generic;
using Google.Protobuf;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// Collects the parts of one value as they arrive (Chunk frames, then the inline data of the
/// closing frame) and presents them as one <see cref="ReadOnlySequence{T}"/> without copying: the
/// codecs read multi-segment sequences directly.
/// </summary>
/// <remarks>
/// Not thread-safe: one frame loop owns it, then whoever decodes the value. It also owns the pooled
/// arrays its parts live in (<see cref="RentedBuffer"/>): <see cref="Release"/> returns them, after
/// which the parts and any sequence made of them must not be read.
/// </remarks>
internal sealed class ValueAssembler
{
    private readonly long _maxSize;
    private List<ReadOnlyMemory<byte>>? _parts;
    private List<RentedBuffer>? _rented;
    private long _length;

    internal ValueAssembler(long maxSize) => _maxSize = maxSize;

    /// <summary>
    /// Adds a part; false if the value would exceed the size limit. The assembler owns
    /// <paramref name="rented"/> (the array the part lives in, if pooled) in either case.
    /// </summary>
    internal bool TryAdd(ByteString part, RentedBuffer? rented = null)
    {
        Keep(rented);
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

    /// <summary>Takes ownership of a pooled array a part of this value lives in (returned by <see cref="Release"/>).</summary>
    internal void Keep(RentedBuffer? rented)
    {
        if (rented is not null)
        {
            (_rented ??= new List<RentedBuffer>(4)).Add(rented);
        }
    }

    /// <summary>Returns the pooled arrays of the parts, once: the value must have been decoded (or abandoned).</summary>
    internal void Release()
    {
        _parts = null;
        if (_rented is { } rented)
        {
            _rented = null;
            foreach (RentedBuffer buffer in rented)
            {
                buffer.Return();
            }
        }
    }

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
