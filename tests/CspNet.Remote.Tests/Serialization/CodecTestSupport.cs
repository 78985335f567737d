using System.Buffers;
using CspNet.Remote.Internal.Serialization;
using CspNet.Remote.Internal.Transport;

namespace CspNet.Remote.Tests.Serialization;

/// <summary>Encodes with a codec and reads back from one segment and from split sequences.</summary>
internal static class CodecTestSupport
{
    public static byte[] Encode<T>(T value)
    {
        ArrayBufferWriter<byte> output = new();
        ValueCodec<T>.Get().Write(value, output);
        return output.WrittenSpan.ToArray();
    }

    public static T Decode<T>(byte[] bytes) => ValueCodec<T>.Get().Read(new ReadOnlySequence<byte>(bytes));

    /// <summary>
    /// Round-trips <paramref name="value"/> through one segment, one-byte segments and three-byte
    /// segments, asserts every reading agrees, and returns the first.
    /// </summary>
    public static T RoundTrip<T>(T value)
    {
        byte[] bytes = Encode(value);
        T whole = Decode<T>(bytes);
        foreach (int size in new[] { 1, 3 })
        {
            T split = ValueCodec<T>.Get().Read(Chained(bytes, size));
            Assert.Equivalent(whole, split, strict: true);
        }

        return whole;
    }

    /// <summary>A sequence of <paramref name="data"/> cut into segments of at most <paramref name="segmentSize"/> bytes.</summary>
    public static ReadOnlySequence<byte> Chained(byte[] data, int segmentSize)
    {
        if (data.Length == 0)
        {
            return ReadOnlySequence<byte>.Empty;
        }

        Segment first = new(data.AsMemory(0, Math.Min(segmentSize, data.Length)), 0);
        Segment last = first;
        for (int start = segmentSize; start < data.Length; start += segmentSize)
        {
            last = last.Append(data.AsMemory(start, Math.Min(segmentSize, data.Length - start)));
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            Segment next = new(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
