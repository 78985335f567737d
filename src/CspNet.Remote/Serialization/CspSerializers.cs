using System;
using CspNet.Remote.Internal.Serialization;

namespace CspNet.Remote;

/// <summary>
/// Chooses how channel values are encoded when they travel between programs; see
/// docs/SERIALIZATION.md for the built-in encodings.
/// </summary>
/// <remarks>
/// Without registration, <c>bool</c>, <c>int</c>, <c>long</c>, <c>uint</c>, <c>ulong</c>,
/// <c>float</c>, <c>double</c>, <c>string</c> and <c>byte[]</c> use fixed binary encodings,
/// protobuf messages use their binary encoding, nullable value types add a presence byte, and other
/// data types (records, classes, structs, collections) use System.Text.Json.
/// </remarks>
public static class CspSerializers
{
    /// <summary>
    /// Makes <paramref name="codec"/> the encoding of every value of <typeparamref name="T"/> this
    /// program sends or receives, in place of the built-in one.
    /// </summary>
    /// <typeparam name="T">The value type. The codec also serves <c>T?</c> when
    /// <typeparamref name="T"/> is a value type (with a presence byte in front).</typeparam>
    /// <param name="codec">The codec; it must be thread-safe.</param>
    /// <exception cref="ArgumentNullException"><paramref name="codec"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">The codec's <see cref="ICspCodec{T}.WireName"/> is empty or blank.</exception>
    /// <exception cref="InvalidOperationException">
    /// This program already chose a codec for <typeparamref name="T"/>: a codec was registered
    /// before, or a channel of <typeparamref name="T"/> already needed one. Register at start-up,
    /// before any remote channel of the type is opened: values already encoded with the old codec
    /// would be unreadable to a program that expects the new one, and both programs must agree on
    /// one encoding for the lifetime of their channels.
    /// </exception>
    public static void Register<T>(ICspCodec<T> codec)
    {
        ArgumentNullException.ThrowIfNull(codec);
        if (string.IsNullOrWhiteSpace(codec.WireName))
        {
            throw new ArgumentException(
                $"The codec {codec.GetType()} for {WireTypeNames.Of(typeof(T))} has an empty WireName; "
                + "give it a name that identifies its encoding, such as \"msgpack:<type name>\".",
                nameof(codec));
        }

        CodecCache<T>.Register(codec);
    }
}
