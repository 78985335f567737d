using System;
using CspNet.Remote.Internal.Serialization;
using Google.Protobuf;

namespace CspNet.Remote.Internal.Transport;

/// <summary>Encodes a value with its codec and splits the bytes into wire parts without copying them again.</summary>
internal static class ValueEncoder
{
    /// <summary>Encodes into a pooled buffer the caller returns when the value is surely sent (see <see cref="PooledValueBuffer"/>).</summary>
    internal static PooledValueBuffer EncodePooled<T>(ValueCodec<T> codec, T value, long maxSize)
    {
        var buffer = new PooledValueBuffer();
        try
        {
            codec.Write(value, buffer);
            ThrowIfTooLarge(buffer.WrittenCount, maxSize);
            return buffer;
        }
        catch
        {
            buffer.Return();
            throw;
        }
    }

    /// <summary>
    /// The built-in encoding of a <c>byte[]</c> value (the presence byte, then the bytes) in a pooled
    /// buffer: for a value that was to go from its own array and goes on the link after all.
    /// </summary>
    internal static PooledValueBuffer EncodeBytesValue(byte[] value) => EncodePooled(BytesValues, value, long.MaxValue);

    private static readonly BytesCodec BytesValues = new();

    private static void ThrowIfTooLarge(int length, long maxSize)
    {
        if (length > maxSize)
        {
            throw new InvalidOperationException(
                $"The value is {length:N0} bytes encoded, more than the {maxSize:N0} bytes allowed (CspNodeOptions.MaxValueSize). Raise the limit in every program, or send the data in smaller parts.");
        }
    }

    /// <summary>
    /// Calls <paramref name="chunk"/> for every part but the last, each at most
    /// <paramref name="chunkSize"/> bytes, and returns the last part (possibly empty) to send inline.
    /// The parts wrap <paramref name="bytes"/>: it must not change until they are sent.
    /// </summary>
    internal static ByteString Split<TState>(ReadOnlyMemory<byte> bytes, int chunkSize, TState state, Action<TState, ByteString> chunk)
    {
        while (bytes.Length > chunkSize)
        {
            chunk(state, UnsafeByteOperations.UnsafeWrap(bytes[..chunkSize]));
            bytes = bytes[chunkSize..];
        }

        return UnsafeByteOperations.UnsafeWrap(bytes);
    }
}
