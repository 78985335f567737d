using System;
using System.Buffers;
using System.IO;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>A user's <see cref="ICspCodec{T}"/> behind the internal contract.</summary>
/// <typeparam name="T">The value type.</typeparam>
internal sealed class RegisteredCodec<T> : ValueCodec<T>
{
    private readonly ICspCodec<T> _codec;

    public RegisteredCodec(ICspCodec<T> codec)
    {
        _codec = codec;

        // Read once: the name is compared at every attach and must not change under us.
        WireName = codec.WireName;
    }

    public override string WireName { get; }

    public override void Write(T value, IBufferWriter<byte> output) => _codec.Write(value, output);

    public override T Read(ReadOnlySequence<byte> input)
    {
        try
        {
            return _codec.Read(input);
        }
        catch (InvalidDataException)
        {
            throw;
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // The link layer maps InvalidDataException to a failed operation; any other exception
            // from a third-party deserializer would look like a bug in the link itself.
            throw WireErrors.Invalid(WireName, $"the registered codec {_codec.GetType()} failed: {e.Message}", e);
        }
    }
}
