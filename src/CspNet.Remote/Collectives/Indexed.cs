using System;
using System.Buffers;
using System.Buffers.Binary;
using System.IO;
using System.Threading;
using CspNet.Remote.Internal.Serialization;

namespace CspNet.Remote.Collectives;

/// <summary>
/// A value with its place in a scatter: the scatter numbers its values 0, 1, 2, ... in the order
/// they were written, and a worker sends its result back with the same index, so the gatherer can
/// put results that arrive in any order back in the order of the work.
/// </summary>
/// <typeparam name="T">The value's type.</typeparam>
/// <param name="Index">The value's place in the scatter's order, from 0.</param>
/// <param name="Value">The value.</param>
public readonly record struct Indexed<T>(long Index, T Value);

/// <summary>
/// The encoding of <see cref="Indexed{T}"/> between programs (<c>indexed:</c> + the wire name of
/// <typeparamref name="T"/>): the index as 8 bytes little-endian, then the encoding of the value.
/// </summary>
/// <typeparam name="T">The value's type.</typeparam>
internal sealed class IndexedCodec<T> : ICspCodec<Indexed<T>>
{
    private static readonly Lock s_gate = new();
    private static volatile bool s_registered;
    private readonly ValueCodec<T> _value;

    private IndexedCodec(ValueCodec<T> value)
    {
        _value = value;
        WireName = "indexed:" + value.WireName;
    }

    public string WireName { get; }

    /// <summary>
    /// Registers this codec for <see cref="Indexed{T}"/> in this program, once, before a collective
    /// opens a channel of it (the built-in rules refuse CspNet's own types). A codec the program
    /// registered itself for the type stays.
    /// </summary>
    /// <exception cref="NotSupportedException">Values of <typeparamref name="T"/> cannot cross between programs.</exception>
    internal static void EnsureRegistered()
    {
        if (s_registered)
        {
            return;
        }

        lock (s_gate)
        {
            if (s_registered)
            {
                return;
            }

            var codec = new IndexedCodec<T>(ValueCodec<T>.Get());
            try
            {
                CspSerializers.Register(codec);
            }
            catch (InvalidOperationException)
            {
                // The program chose a codec of its own for Indexed<T>: both ends then use it.
            }

            s_registered = true;
        }
    }

    public void Write(Indexed<T> value, IBufferWriter<byte> output)
    {
        BinaryPrimitives.WriteInt64LittleEndian(output.GetSpan(sizeof(long)), value.Index);
        output.Advance(sizeof(long));
        _value.Write(value.Value, output);
    }

    public Indexed<T> Read(ReadOnlySequence<byte> input)
    {
        if (input.Length < sizeof(long))
        {
            throw new InvalidDataException($"An {WireName} value needs at least {sizeof(long)} bytes (its index); it has {input.Length}.");
        }

        Span<byte> index = stackalloc byte[sizeof(long)];
        input.Slice(0, sizeof(long)).CopyTo(index);
        return new Indexed<T>(BinaryPrimitives.ReadInt64LittleEndian(index), _value.Read(input.Slice(sizeof(long))));
    }
}
