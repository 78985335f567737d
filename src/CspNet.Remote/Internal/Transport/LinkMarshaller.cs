using System;
using System.Buffers;
using CspNet.Remote.Internal.Diagnostics;
using CspNet.Remote.Protocol;
using Google.Protobuf;
using Grpc.Core;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// How this program turns Link frames into gRPC messages and back: the protobuf encoding of
/// link.proto, byte for byte, but a received frame's value bytes land in a pooled array instead
/// of a new one per frame.
/// </summary>
/// <remarks>
/// <para>
/// The generated marshaller copies every <c>bytes</c> field into a new <see cref="ByteString"/>:
/// for a megabyte chunk that is a fresh large-object-heap array per frame, reclaimed only by full
/// collections, whose page faults and copies cost more than the network on loopback. Here, a frame
/// that is one <c>Chunk</c>, <c>Write</c>, <c>Completed</c> or <c>Reserved</c> whose data field occurs
/// once with at least <see cref="DefaultPooledThreshold"/> bytes has that data copied once, out of
/// gRPC's receive buffers, into an array rented from the pool, which the frame wraps and records in
/// its <c>Rented</c> property; the rest of the frame (a few bytes) goes through the generated parser,
/// so every other field, including fields added to link.proto later, means what protobuf says.
/// Whoever consumes the frame returns the array (see <see cref="RentedBuffer"/>). Every other frame,
/// and every malformed one, goes through the generated parser whole, so its meaning and its errors
/// (<see cref="InvalidProtocolBufferException"/>) are protobuf's own.
/// </para>
/// <para>
/// Frames are written as the generated serializer writes them: the size first (gRPC then gives a
/// buffer of exactly that size), then the encoding straight into gRPC's buffer writer, the value
/// bytes copied once from the encoder's pooled buffer.
/// </para>
/// </remarks>
internal sealed class LinkMarshaller
{
    /// <summary>Data below this size goes through the generated parser: a small copy costs less than a rental.</summary>
    internal const int DefaultPooledThreshold = 16 << 10;

    private const string ServiceName = "cspnet.link.v1.Link";

    // Wire types (protobuf encoding).
    private const int Varint = 0;
    private const int Fixed64 = 1;
    private const int LengthDelimited = 2;
    private const int Fixed32 = 5;

    private readonly ArrayPool<byte> _pool;
    private readonly int _pooledThreshold;

    /// <summary>Creates marshallers whose received data lives in arrays from <paramref name="pool"/>.</summary>
    /// <param name="pool">Where received data arrays come from and go back to.</param>
    /// <param name="pooledThreshold">The smallest data that is copied into a pooled array.</param>
    internal LinkMarshaller(ArrayPool<byte> pool, int pooledThreshold)
    {
        _pool = pool;
        _pooledThreshold = pooledThreshold;
        ClientFrames = new Marshaller<ClientFrame>(Serialize, DeserializeClientFrame);
        HomeFrames = new Marshaller<HomeFrame>(Serialize, DeserializeHomeFrame);
        Connect = new Method<ClientFrame, HomeFrame>(MethodType.DuplexStreaming, ServiceName, "Connect", ClientFrames, HomeFrames);
    }

    /// <summary>The marshallers every link of this process uses: the shared array pool.</summary>
    internal static LinkMarshaller Shared { get; } = new(ArrayPool<byte>.Shared, DefaultPooledThreshold);

    /// <summary>Client frames (client to home).</summary>
    internal Marshaller<ClientFrame> ClientFrames { get; }

    /// <summary>Home frames (home to client).</summary>
    internal Marshaller<HomeFrame> HomeFrames { get; }

    /// <summary>link.proto's <c>Link.Connect</c> ("/cspnet.link.v1.Link/Connect") with these marshallers.</summary>
    internal Method<ClientFrame, HomeFrame> Connect { get; }

    private static void Serialize<T>(T frame, SerializationContext context)
        where T : IMessage<T>
    {
        int size = frame.CalculateSize();
        context.SetPayloadLength(size);
        frame.WriteTo(context.GetBufferWriter());
        context.Complete();
        RemoteMetrics.CountSent(size);
    }

    private ClientFrame DeserializeClientFrame(DeserializationContext context) => Deserialize(context, ClientFrame.Parser, home: false);

    private HomeFrame DeserializeHomeFrame(DeserializationContext context) => Deserialize(context, HomeFrame.Parser, home: true);

    /// <summary>
    /// A frame that is one data-bearing body with large data: the generated parser reads the frame
    /// without its data field (a few bytes: every other field, known, unknown or added to link.proto
    /// later, means exactly what protobuf says), then the data goes back in, in a pooled array. Any
    /// other frame goes to <paramref name="parser"/> whole.
    /// </summary>
    private T Deserialize<T>(DeserializationContext context, MessageParser<T> parser, bool home)
        where T : IMessage<T>, IPooledFrame
    {
        ReadOnlySequence<byte> payload = context.PayloadAsReadOnlySequence();
        RemoteMetrics.CountReceived(payload.Length);
        if (!TryFindData(payload, home, out DataField field))
        {
            return parser.ParseFrom(payload);
        }

        T frame = parser.ParseFrom(WithoutData(payload, field));

        // The body is the oneof's current case (protobuf's reflection: one code path for every kind).
        if (frame.Descriptor.Oneofs[0].Accessor.GetCaseFieldDescriptor(frame)?.Accessor.GetValue(frame) is not IMessage body)
        {
            return parser.ParseFrom(payload); // not reached: the scan found the body
        }

        byte[] array = _pool.Rent(field.DataLength);
        payload.Slice(field.DataStart, field.DataLength).CopyTo(array);
        body.Descriptor.FindFieldByNumber(field.Number).Accessor.SetValue(body, UnsafeByteOperations.UnsafeWrap(array.AsMemory(0, field.DataLength)));
        frame.Rented = new RentedBuffer(_pool, array);
        return frame;
    }

    /// <summary>
    /// Finds the data of a frame whose encoding is exactly one length-delimited body of a kind that
    /// carries data, running to the end, in which the data field occurs once with at least the
    /// threshold's bytes. Never throws: anything else (or anything malformed) is the generated
    /// parser's to judge, on the whole frame.
    /// </summary>
    private bool TryFindData(ReadOnlySequence<byte> payload, bool home, out DataField found)
    {
        found = default;
        var reader = new SequenceReader<byte>(payload);
        if (!TryReadTag(ref reader, out int body, out int wireType) || wireType != LengthDelimited)
        {
            return false;
        }

        long tagLength = reader.Consumed;
        int dataField = DataFieldOf(home, body);
        if (dataField == 0 || !TryReadLength(ref reader, out int bodyLength) || bodyLength != reader.Remaining)
        {
            return false;
        }

        long bodyStart = reader.Consumed;
        long fieldStart = -1, dataStart = 0;
        int dataLength = 0;
        while (!reader.End)
        {
            long at = reader.Consumed;
            if (!TryReadTag(ref reader, out int field, out wireType))
            {
                return false;
            }

            if (field == dataField && wireType == LengthDelimited)
            {
                if (fieldStart >= 0 || !TryReadLength(ref reader, out dataLength) || dataLength > reader.Remaining)
                {
                    return false; // twice (protobuf keeps the last), or cut short
                }

                fieldStart = at;
                dataStart = reader.Consumed;
                reader.Advance(dataLength);
            }
            else if (!TrySkip(ref reader, wireType))
            {
                return false;
            }
        }

        if (fieldStart < 0 || dataLength < _pooledThreshold)
        {
            return false;
        }

        found = new DataField(dataField, tagLength, bodyStart, fieldStart, dataStart, dataLength);
        return true;
    }

    /// <summary>The frame's encoding with the data field left out, its body's length written again.</summary>
    private static byte[] WithoutData(ReadOnlySequence<byte> payload, DataField field)
    {
        long dataEnd = field.DataStart + field.DataLength;
        long before = field.FieldStart - field.BodyStart, after = payload.Length - dataEnd;
        ulong bodyLength = (ulong)(before + after);
        byte[] bytes = new byte[field.TagLength + VarintLength(bodyLength) + before + after];
        payload.Slice(0, field.TagLength).CopyTo(bytes);
        int at = (int)field.TagLength;
        for (; bodyLength >= 0x80; bodyLength >>= 7)
        {
            bytes[at++] = (byte)(bodyLength | 0x80);
        }

        bytes[at++] = (byte)bodyLength;
        payload.Slice(field.BodyStart, before).CopyTo(bytes.AsSpan(at));
        payload.Slice(dataEnd, after).CopyTo(bytes.AsSpan(at + (int)before));
        return bytes;
    }

    private static int VarintLength(ulong value)
    {
        int length = 1;
        for (; value >= 0x80; value >>= 7)
        {
            length++;
        }

        return length;
    }

    /// <summary>The data field of each body that carries a value's bytes, or 0.</summary>
    private static int DataFieldOf(bool home, int body) => (home, body) switch
    {
        (false, ClientFrame.ChunkFieldNumber) or (true, HomeFrame.ChunkFieldNumber) => Chunk.DataFieldNumber,
        (false, ClientFrame.WriteFieldNumber) => Write.DataFieldNumber,
        (true, HomeFrame.ReservedFieldNumber) => Reserved.DataFieldNumber,
        (true, HomeFrame.CompletedFieldNumber) => Completed.DataFieldNumber,
        _ => 0,
    };

    private static bool TrySkip(ref SequenceReader<byte> reader, int wireType)
    {
        switch (wireType)
        {
            case Varint:
                return TryReadVarint(ref reader, out _);
            case Fixed64:
                return TryAdvance(ref reader, 8);
            case LengthDelimited:
                return TryReadLength(ref reader, out int length) && TryAdvance(ref reader, length);
            case Fixed32:
                return TryAdvance(ref reader, 4);
            default:
                return false; // groups (deprecated) and invalid wire types
        }
    }

    private static bool TryAdvance(ref SequenceReader<byte> reader, long count)
    {
        if (reader.Remaining < count)
        {
            return false;
        }

        reader.Advance(count);
        return true;
    }

    private static bool TryReadTag(ref SequenceReader<byte> reader, out int field, out int wireType)
    {
        // As protobuf reads a tag: the low 32 bits of a varint.
        bool read = TryReadVarint(ref reader, out ulong value);
        uint tag = unchecked((uint)value);
        field = (int)(tag >> 3);
        wireType = (int)(tag & 7);
        return read && field > 0;
    }

    private static bool TryReadLength(ref SequenceReader<byte> reader, out int length)
    {
        // As protobuf reads a length: the low 32 bits of a varint, which must not be negative.
        bool read = TryReadVarint(ref reader, out ulong value);
        length = unchecked((int)value);
        return read && length >= 0;
    }

    private static bool TryReadVarint(ref SequenceReader<byte> reader, out ulong value)
    {
        value = 0;
        for (int shift = 0; shift < 64; shift += 7)
        {
            if (!reader.TryRead(out byte b))
            {
                return false;
            }

            value |= (ulong)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                return true;
            }
        }

        return false; // longer than ten bytes: malformed
    }

    /// <summary>Where a frame's body and its data field lie in the payload.</summary>
    private readonly record struct DataField(int Number, long TagLength, long BodyStart, long FieldStart, long DataStart, int DataLength);
}
