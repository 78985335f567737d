using System;
using System.Buffers;
using System.IO;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>
/// The encoding of channel values of <typeparamref name="T"/> between programs: what the link
/// layer calls to turn a value into the opaque bytes of link.proto's Chunk frames and back.
/// </summary>
/// <typeparam name="T">The channel value type.</typeparam>
/// <remarks>Instances are immutable and thread-safe; <see cref="Get"/> returns one per type.</remarks>
internal abstract class ValueCodec<T>
{
    /// <summary>link.proto's <c>value_type</c>: both ends of a channel must report the same name.</summary>
    public abstract string WireName { get; }

    /// <summary>Appends the encoding of <paramref name="value"/> to <paramref name="output"/>.</summary>
    /// <param name="value">The value; <see langword="null"/> is allowed for reference types.</param>
    /// <param name="output">Where the bytes go. If Write throws, it may hold part of an encoding: discard it.</param>
    /// <exception cref="ArgumentException">The value cannot be encoded (a string with a lone
    /// surrogate, an object graph with a cycle, ...).</exception>
    public abstract void Write(T value, IBufferWriter<byte> output);

    /// <summary>Decodes one value from all of <paramref name="input"/>, which may have many segments.</summary>
    /// <param name="input">The bytes one <see cref="Write"/> produced.</param>
    /// <returns>The value.</returns>
    /// <exception cref="InvalidDataException">The bytes are not a valid encoding of a <typeparamref name="T"/>.</exception>
    public abstract T Read(ReadOnlySequence<byte> input);

    /// <summary>The codec of <typeparamref name="T"/>: the registered one if any, else the built-in one.</summary>
    /// <returns>The same instance on every call.</returns>
    /// <exception cref="NotSupportedException">Values of <typeparamref name="T"/> cannot cross
    /// between programs; the message says why and what to send instead.</exception>
    public static ValueCodec<T> Get() => CodecCache<T>.Get();
}
