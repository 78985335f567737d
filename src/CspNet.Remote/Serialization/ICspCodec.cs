using System.Buffers;
using System.IO;

namespace CspNet.Remote;

/// <summary>
/// Turns values of <typeparamref name="T"/> into bytes and back, for channel values that travel
/// between programs. Implement it to plug in another serializer (MessagePack, a hand-written
/// format, ...) and register it with <see cref="CspSerializers.Register{T}(ICspCodec{T})"/>.
/// </summary>
/// <typeparam name="T">The channel value type.</typeparam>
/// <remarks>
/// <para>
/// Every program that uses a channel of <typeparamref name="T"/> must register an equivalent
/// codec: the two ends compare <see cref="WireName"/> when they attach, and each side decodes the
/// other's bytes.
/// </para>
/// <para>
/// Thread-safety: <see cref="Write"/> and <see cref="Read"/> are called from many threads at once
/// and must not keep state between calls.
/// </para>
/// </remarks>
public interface ICspCodec<T>
{
    /// <summary>
    /// The name both programs compare when they attach to a channel (link.proto's
    /// <c>value_type</c>), for example <c>"msgpack:MyApp.Order"</c>. It must differ from the names
    /// of every other encoding of the same type, so that a mismatch is caught at attach time
    /// rather than as garbage values.
    /// </summary>
    string WireName { get; }

    /// <summary>Appends the encoding of <paramref name="value"/> to <paramref name="output"/>.</summary>
    /// <param name="value">The value to encode; <see langword="null"/> for reference types if the codec allows it.</param>
    /// <param name="output">Where the bytes go.</param>
    void Write(T value, IBufferWriter<byte> output);

    /// <summary>Decodes one value from all of <paramref name="input"/>.</summary>
    /// <param name="input">Exactly the bytes one <see cref="Write"/> produced; it may have many segments.</param>
    /// <returns>The decoded value.</returns>
    /// <exception cref="InvalidDataException">The bytes are not a valid encoding. Other exceptions
    /// are reported to the caller wrapped in an <see cref="InvalidDataException"/>.</exception>
    T Read(ReadOnlySequence<byte> input);
}
