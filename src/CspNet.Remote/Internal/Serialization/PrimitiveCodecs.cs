using System;
using System.Buffers;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>
/// "int32", "int64", "uint32", "uint64", "float", "double": the value's bits, fixed width and
/// little-endian, with no header, so that a reader in any language decodes one with one load.
/// </summary>
/// <typeparam name="T">The primitive type.</typeparam>
/// <typeparam name="TBits">The integer type of the same size whose bits are written: <typeparamref name="T"/>
/// itself for integers, <c>uint</c> or <c>ulong</c> for floats (so NaN payloads and -0 survive).</typeparam>
internal sealed class LittleEndianCodec<T, TBits> : ValueCodec<T>
    where T : struct
    where TBits : struct, IBinaryInteger<TBits>
{
    // Constants once the JIT has specialized the class for T and TBits.
    private static readonly int s_size = Unsafe.SizeOf<TBits>();
    private static readonly bool s_signed = TBits.IsNegative(TBits.AllBitsSet);

    public LittleEndianCodec(string wireName) => WireName = wireName;

    public override string WireName { get; }

    public override void Write(T value, IBufferWriter<byte> output)
    {
        Unsafe.BitCast<T, TBits>(value).WriteLittleEndian(output.GetSpan(s_size));
        output.Advance(s_size);
    }

    public override T Read(ReadOnlySequence<byte> input)
    {
        Span<byte> scratch = stackalloc byte[sizeof(ulong)];
        ReadOnlySpan<byte> bytes = FixedWidth.Bytes(input, s_size, WireName, scratch);
        return Unsafe.BitCast<TBits, T>(TBits.ReadLittleEndian(bytes, isUnsigned: !s_signed));
    }
}

/// <summary>"bool": one byte, 0 or 1; any other byte is malformed rather than "true", so that both
/// programs agree on every accepted encoding.</summary>
internal sealed class BoolCodec : ValueCodec<bool>
{
    public override string WireName => "bool";

    public override void Write(bool value, IBufferWriter<byte> output)
    {
        output.GetSpan(1)[0] = value ? (byte)1 : (byte)0;
        output.Advance(1);
    }

    public override bool Read(ReadOnlySequence<byte> input) => FixedWidth.Bytes(input, 1, WireName, stackalloc byte[1])[0] switch
    {
        0 => false,
        1 => true,
        var other => throw WireErrors.Invalid(WireName, $"its byte is {other}; it must be 0 (false) or 1 (true)"),
    };
}

/// <summary>Reading fixed-width encodings.</summary>
internal static class FixedWidth
{
    /// <summary>
    /// The <paramref name="size"/> bytes of <paramref name="input"/>: its first segment if that
    /// holds them all, else a copy in <paramref name="scratch"/> (a value straddling segments).
    /// </summary>
    /// <exception cref="System.IO.InvalidDataException">The input is not exactly <paramref name="size"/> bytes long.</exception>
    public static ReadOnlySpan<byte> Bytes(in ReadOnlySequence<byte> input, int size, string wireName, Span<byte> scratch)
    {
        if (input.Length != size)
        {
            throw WireErrors.Invalid(wireName, $"it has {input.Length} byte(s); the encoding is exactly {size}");
        }

        if (input.FirstSpan.Length >= size)
        {
            return input.FirstSpan[..size];
        }

        input.CopyTo(scratch);
        return scratch[..size];
    }
}
