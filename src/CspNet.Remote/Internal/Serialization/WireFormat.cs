using System;
using System.Buffers;
using System.IO;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>The presence byte that reference types and nullable value types put before their encoding.</summary>
internal static class Presence
{
    /// <summary>The whole encoding of a <see langword="null"/> value.</summary>
    public const byte Null = 0;

    /// <summary>The first byte of the encoding of a value that is there.</summary>
    public const byte Present = 1;

    /// <summary>Writes the one-byte encoding of <see langword="null"/>.</summary>
    public static void WriteNull(IBufferWriter<byte> output) => WriteByte(output, Null);

    /// <summary>Writes the byte that precedes a value.</summary>
    public static void WritePresent(IBufferWriter<byte> output) => WriteByte(output, Present);

    /// <summary>
    /// Reads the presence byte: <see langword="false"/> for a null (then nothing may follow);
    /// <see langword="true"/> with <paramref name="input"/> narrowed to the value's bytes.
    /// </summary>
    /// <exception cref="InvalidDataException">No presence byte, an unknown one, or bytes after a null.</exception>
    public static bool Read(ref ReadOnlySequence<byte> input, string wireName)
    {
        if (input.IsEmpty)
        {
            throw WireErrors.Invalid(wireName, "it is empty; even a null value has its presence byte (0)");
        }

        byte first = input.FirstSpan[0];
        if (first == Present)
        {
            input = input.Slice(1);
            return true;
        }

        if (first != Null)
        {
            throw WireErrors.Invalid(wireName, $"its presence byte is {first}; it must be 0 (null) or 1 (a value follows)");
        }

        if (input.Length != 1)
        {
            throw WireErrors.Invalid(wireName, $"it is null (presence byte 0) yet {input.Length - 1} more byte(s) follow");
        }

        return false;
    }

    private static void WriteByte(IBufferWriter<byte> output, byte value)
    {
        output.GetSpan(1)[0] = value;
        output.Advance(1);
    }
}

/// <summary>The exceptions codecs throw, worded alike.</summary>
internal static class WireErrors
{
    /// <summary>Malformed input: <c>"Invalid '&lt;wire name&gt;' value: &lt;why&gt;."</c></summary>
    public static InvalidDataException Invalid(string wireName, string why, Exception? inner = null) =>
        new($"Invalid '{wireName}' value: {why.TrimEnd()}{(why.EndsWith('.') ? "" : ".")}", inner);
}
