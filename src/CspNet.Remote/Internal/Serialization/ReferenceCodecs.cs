using System;
using System.Buffers;
using System.Text;
using System.Threading;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>
/// Encodings that start with the presence byte: <c>0</c> alone for <see langword="null"/>, or
/// <c>1</c> followed by the value's own encoding.
/// </summary>
/// <typeparam name="T">A reference type, or a <see cref="Nullable{T}"/>.</typeparam>
internal abstract class PresenceCodec<T> : ValueCodec<T?>
{
    /// <inheritdoc />
    public sealed override void Write(T? value, IBufferWriter<byte> output)
    {
        if (value is null)
        {
            Presence.WriteNull(output);
        }
        else
        {
            WritePresent(value, output);
        }
    }

    /// <inheritdoc />
    public sealed override T? Read(ReadOnlySequence<byte> input) =>
        Presence.Read(ref input, WireName) ? ReadPresent(input) : default;

    /// <summary>Writes the presence byte <see cref="Presence.Present"/>, then the value.</summary>
    /// <remarks>The presence byte is left to the implementation so that it can share one span with the value.</remarks>
    protected abstract void WritePresent(T value, IBufferWriter<byte> output);

    /// <summary>Reads the value from the bytes after the presence byte.</summary>
    protected abstract T ReadPresent(ReadOnlySequence<byte> input);
}

/// <summary>"string": the presence byte, then the UTF-8 bytes (no length: the value's end is the end of the input).</summary>
internal sealed class StringCodec : PresenceCodec<string>
{
    // Strict both ways: a lone surrogate cannot become UTF-8 and invalid UTF-8 is malformed
    // input; replacing either with U+FFFD would silently change the value.
    private static readonly UTF8Encoding s_utf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    public override string WireName => "string";

    protected override void WritePresent(string value, IBufferWriter<byte> output)
    {
        int length;
        try
        {
            length = s_utf8.GetByteCount(value);
        }
        catch (EncoderFallbackException e)
        {
            throw new ArgumentException(
                $"The string cannot be sent: it holds a lone UTF-16 surrogate at index {e.Index}, which has no UTF-8 encoding.",
                nameof(value),
                e);
        }

        // Counting first costs a pass over the chars but lets the bytes go straight to their
        // place, once, whatever the string's size.
        Span<byte> span = output.GetSpan(1 + length);
        span[0] = Presence.Present;
        s_utf8.GetBytes(value, span.Slice(1, length));
        output.Advance(1 + length);
    }

    protected override string ReadPresent(ReadOnlySequence<byte> input)
    {
        try
        {
            return s_utf8.GetString(input);
        }
        catch (DecoderFallbackException e)
        {
            throw WireErrors.Invalid(WireName, "its bytes are not valid UTF-8", e);
        }
    }
}

/// <summary>"bytes" (<c>byte[]</c>): the presence byte, then the bytes.</summary>
internal sealed class BytesCodec : PresenceCodec<byte[]>
{
    public override string WireName => "bytes";

    protected override void WritePresent(byte[] value, IBufferWriter<byte> output)
    {
        // One span for header and payload: a multi-megabyte array is copied once, straight
        // into the output.
        Span<byte> span = output.GetSpan(1 + value.Length);
        span[0] = Presence.Present;
        value.CopyTo(span.Slice(1));
        output.Advance(1 + value.Length);
    }

    protected override byte[] ReadPresent(ReadOnlySequence<byte> input)
    {
        // Bytes that came on a bulk lane straight into their own array: that array is the value.
        if (input.End.GetObject() is ReceivedBytes.Segment received && input.Length == received.Value.Length && received.TryTake())
        {
            return received.Value;
        }

        // Every byte is overwritten by the copy, so the array need not be zeroed first: for a
        // megabyte value that is a pass over a megabyte of memory saved (ToArray zeroes, then copies).
        byte[] value = GC.AllocateUninitializedArray<byte>(checked((int)input.Length));
        input.CopyTo(value);
        return value;
    }
}

/// <summary>
/// A <c>byte[]</c> value received whole into an array of its exact length (from a bulk lane): its
/// encoding as a sequence that <see cref="BytesCodec"/> decodes to that very array, with no copy,
/// and any other codec decodes as it would any bytes (a home whose channel is not <c>byte[]</c>).
/// </summary>
internal static class ReceivedBytes
{
    /// <summary>The encoding of <paramref name="value"/> (the presence byte, then the array itself); decodes to the array once.</summary>
    internal static ReadOnlySequence<byte> Encoding(byte[] value)
    {
        var presence = new PresenceSegment();
        var bytes = new Segment(value, presence);
        return new ReadOnlySequence<byte>(presence, 0, bytes, value.Length);
    }

    internal sealed class PresenceSegment : ReadOnlySequenceSegment<byte>
    {
        private static readonly byte[] Present = [Presence.Present];

        internal PresenceSegment() => Memory = Present;

        internal void Link(ReadOnlySequenceSegment<byte> next) => Next = next;
    }

    /// <summary>The array's segment; its array is handed out as a decoded value at most once.</summary>
    internal sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        private int _taken;

        internal Segment(byte[] value, PresenceSegment previous)
        {
            Value = value;
            Memory = value;
            RunningIndex = 1;
            previous.Link(this);
        }

        internal byte[] Value { get; }

        /// <summary>True the first time only: a second decode of the same bytes copies them, so two values never share an array.</summary>
        internal bool TryTake() => Interlocked.Exchange(ref _taken, 1) == 0;
    }
}

/// <summary>"opt:&lt;inner&gt;" (<c>T?</c> for a value type): the presence byte, then the inner encoding.</summary>
/// <typeparam name="TValue">The underlying value type.</typeparam>
internal sealed class NullableCodec<TValue> : PresenceCodec<TValue?>
    where TValue : struct
{
    private readonly ValueCodec<TValue> _inner;

    public NullableCodec(ValueCodec<TValue> inner)
    {
        _inner = inner;
        WireName = "opt:" + inner.WireName;
    }

    public override string WireName { get; }

    protected override void WritePresent(TValue? value, IBufferWriter<byte> output)
    {
        Presence.WritePresent(output);
        _inner.Write(value.GetValueOrDefault(), output);
    }

    protected override TValue? ReadPresent(ReadOnlySequence<byte> input) => _inner.Read(input);
}
