using System;
using System.Buffers;
using CspNet.Remote.Protocol;
using Google.Protobuf;
using Grpc.Core;

namespace CspNet.Remote.Internal;

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
/// whose data is at least <see cref="DefaultPooledThreshold"/> bytes and whose encoding has the
/// plain shape every protobuf encoder produces (one body, each known field at most once, no
/// unknown field) is parsed by hand: the data is copied once, out of gRPC's receive buffers, into
/// an array rented from the pool, which the frame wraps and records in its <c>Rented</c> property.
/// Whoever consumes the frame returns the array (see <see cref="RentedBuffer"/>). Every other frame,
/// and every malformed one, goes through the generated parser, so its meaning and its errors
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

    // Wire types (protobuf encoding): a varint, or a length-delimited field.
    private const int Varint = 0;
    private const int LengthDelimited = 2;

    // The highest field number of a data-bearing body (Completed.data = 6).
    private const int MaxFieldNumber = 6;

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
        context.SetPayloadLength(frame.CalculateSize());
        frame.WriteTo(context.GetBufferWriter());
        context.Complete();
    }

    private ClientFrame DeserializeClientFrame(DeserializationContext context) => Deserialize(
        context,
        ClientFrame.Parser,
        home: false,
        static (body, fields, data) => body == ClientFrame.ChunkFieldNumber
            ? new ClientFrame { Chunk = new Chunk { OpId = fields[Chunk.OpIdFieldNumber], Data = data } }
            : new ClientFrame { Write = new Write { Handle = unchecked((uint)fields[Write.HandleFieldNumber]), OpId = fields[Write.OpIdFieldNumber], Data = data } });

    private HomeFrame DeserializeHomeFrame(DeserializationContext context) => Deserialize(
        context,
        HomeFrame.Parser,
        home: true,
        static (body, fields, data) => body switch
        {
            HomeFrame.ChunkFieldNumber => new HomeFrame { Chunk = new Chunk { OpId = fields[Chunk.OpIdFieldNumber], Data = data } },
            HomeFrame.ReservedFieldNumber => new HomeFrame { Reserved = new Reserved { OpId = fields[Reserved.OpIdFieldNumber], Data = data } },
            _ => new HomeFrame
            {
                Completed = new Completed
                {
                    // As protobuf reads int32 and enum fields: the low 32 bits of the varint.
                    OpId = fields[Completed.OpIdFieldNumber],
                    Outcome = (Outcome)unchecked((int)fields[Completed.OutcomeFieldNumber]),
                    Status = unchecked((int)fields[Completed.StatusFieldNumber]),
                    Count = unchecked((int)fields[Completed.CountFieldNumber]),
                    Data = data,
                },
            },
        });

    /// <summary>
    /// A frame of the plain shape with large data is built by <paramref name="build"/> (body field
    /// number, varint fields by number, the data in a pooled array); any other goes to <paramref name="parser"/>.
    /// </summary>
    private T Deserialize<T>(DeserializationContext context, MessageParser<T> parser, bool home, Func<int, ReadOnlySpan<ulong>, ByteString, T> build)
        where T : IMessage<T>, IPooledFrame
    {
        ReadOnlySequence<byte> payload = context.PayloadAsReadOnlySequence();
        Span<ulong> fields = stackalloc ulong[MaxFieldNumber + 1];
        int body = Scan(payload, home, fields, out long dataStart, out int dataLength);
        if (body == 0)
        {
            return parser.ParseFrom(payload);
        }

        byte[] array = _pool.Rent(dataLength);
        payload.Slice(dataStart, dataLength).CopyTo(array);
        T frame = build(body, fields, UnsafeByteOperations.UnsafeWrap(array.AsMemory(0, dataLength)));
        frame.Rented = new RentedBuffer(_pool, array);
        return frame;
    }

    /// <summary>
    /// The fields of a data-bearing body and where its data lies, when the frame has the plain shape
    /// this parser handles and data worth pooling; the body's field number, or 0 for "let the
    /// generated parser do it". Never throws: anything unexpected is the generated parser's to judge.
    /// </summary>
    private int Scan(ReadOnlySequence<byte> payload, bool home, Span<ulong> fields, out long dataStart, out int dataLength)
    {
        dataStart = 0;
        dataLength = -1;
        var reader = new SequenceReader<byte>(payload);

        // The frame: exactly one field, the body, length-delimited and running to the end.
        if (!TryReadTag(ref reader, out int body, out int wireType) || wireType != LengthDelimited ||
            !TryReadLength(ref reader, out int bodyLength) || bodyLength != reader.Remaining)
        {
            return 0;
        }

        (int dataField, int varintFields) = BodyShape(home, body);
        if (dataField == 0)
        {
            return 0;
        }

        int seen = 0;
        while (!reader.End)
        {
            if (!TryReadTag(ref reader, out int field, out wireType) || field > MaxFieldNumber || (seen & (1 << field)) != 0)
            {
                return 0; // unknown or repeated field: protobuf's merge rules apply
            }

            seen |= 1 << field;
            if (field == dataField && wireType == LengthDelimited)
            {
                if (!TryReadLength(ref reader, out dataLength) || dataLength > reader.Remaining)
                {
                    return 0;
                }

                dataStart = reader.Consumed;
                reader.Advance(dataLength);
            }
            else if ((varintFields & (1 << field)) != 0 && wireType == Varint)
            {
                if (!TryReadVarint(ref reader, out fields[field]))
                {
                    return 0;
                }
            }
            else
            {
                return 0; // a field this body does not have, or a known field with another wire type
            }
        }

        return dataLength >= _pooledThreshold ? body : 0;
    }

    /// <summary>The data field and the varint fields (a bit per field number) of each body that carries data.</summary>
    private static (int DataField, int VarintFields) BodyShape(bool home, int body) => (home, body) switch
    {
        (false, ClientFrame.ChunkFieldNumber) or (true, HomeFrame.ChunkFieldNumber) => (Chunk.DataFieldNumber, 1 << Chunk.OpIdFieldNumber),
        (false, ClientFrame.WriteFieldNumber) => (Write.DataFieldNumber, (1 << Write.HandleFieldNumber) | (1 << Write.OpIdFieldNumber)),
        (true, HomeFrame.ReservedFieldNumber) => (Reserved.DataFieldNumber, 1 << Reserved.OpIdFieldNumber),
        (true, HomeFrame.CompletedFieldNumber) => (
            Completed.DataFieldNumber,
            (1 << Completed.OpIdFieldNumber) | (1 << Completed.OutcomeFieldNumber) | (1 << Completed.StatusFieldNumber) | (1 << Completed.CountFieldNumber)),
        _ => (0, 0),
    };

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
}
