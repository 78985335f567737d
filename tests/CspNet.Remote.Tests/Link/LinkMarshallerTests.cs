using System.Buffers;
using System.Runtime.InteropServices;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;
using Google.Protobuf;
using Grpc.Core;
using static CspNet.Remote.Tests.Serialization.CodecTestSupport;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// The Link marshaller: link.proto's protobuf bytes exactly, frames with large data parsed into
/// pooled arrays that are returned exactly once, and every other input judged by protobuf's own
/// parser.
/// </summary>
public sealed class LinkMarshallerTests
{
    private const int Large = 40_000;
    private const string Traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    [Fact]
    public void Serialize_EveryFrameKind_WritesTheGeneratedSerializersBytes()
    {
        var marshaller = new LinkMarshaller(new CountingPool(), LinkMarshaller.DefaultPooledThreshold);
        foreach (int size in new[] { 0, 5, Large })
        {
            foreach (ClientFrame frame in ClientFrames(Data(size)))
            {
                Assert.Equal(frame.ToByteArray(), Serialize(marshaller.ClientFrames, frame));
            }

            foreach (HomeFrame frame in HomeFrames(Data(size)))
            {
                Assert.Equal(frame.ToByteArray(), Serialize(marshaller.HomeFrames, frame));
            }
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(LinkMarshaller.DefaultPooledThreshold)]
    public void Deserialize_EveryFrameKindWholeOrSplit_RoundTripsAndReturnsEveryArray(int threshold)
    {
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, threshold);
        foreach (int size in new[] { 0, 5, Large })
        {
            byte[] data = Data(size);
            foreach (ClientFrame frame in ClientFrames(data))
            {
                AssertRoundTrips(marshaller.ClientFrames, frame, pool);
            }

            foreach (HomeFrame frame in HomeFrames(data))
            {
                AssertRoundTrips(marshaller.HomeFrames, frame, pool);
            }
        }

        pool.AssertAllReturnedOnce();
    }

    [Fact]
    public void Deserialize_LargeData_WrapsTheRentedArrayWithoutAnotherCopy()
    {
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, LinkMarshaller.DefaultPooledThreshold);
        byte[] data = Data(Large);
        var sent = new ClientFrame { Write = new Write { Handle = 3, OpId = 99, Data = ByteString.CopyFrom(data) } };

        ClientFrame received = Deserialize(marshaller.ClientFrames, sent.ToByteArray(), segmentSize: 4096);

        Assert.Equal(sent, received);
        Assert.NotNull(received.Rented);
        Assert.Equal(1, pool.Outstanding);
        Assert.True(MemoryMarshal.TryGetArray(received.Write.Data.Memory, out ArraySegment<byte> segment));
        Assert.True(pool.IsRented(segment.Array!));
        Assert.Equal(0, segment.Offset);
    }

    [Fact]
    public void Deserialize_SmallData_RentsNothing()
    {
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, LinkMarshaller.DefaultPooledThreshold);
        var sent = new HomeFrame { Completed = new Completed { OpId = 1, Outcome = Outcome.Ok, Data = ByteString.CopyFrom(Data(100)) } };

        HomeFrame received = Deserialize(marshaller.HomeFrames, sent.ToByteArray(), segmentSize: 7);

        Assert.Equal(sent, received);
        Assert.Null(received.Rented);
        Assert.Equal(0, pool.Rents);
    }

    [Fact]
    public void Deserialize_LargeDataBesideAFieldUnknownHere_PooledAndTheFieldKept()
    {
        // A field a later link.proto may add (as a flag on Write): the data is still pooled, and
        // the field survives as protobuf keeps unknown fields.
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, LinkMarshaller.DefaultPooledThreshold);
        byte[] input = Field(5, 2, [.. Varint(1 << 3 | 0), .. Varint(4), .. Varint(2 << 3 | 0), .. Varint(8), .. Field(3, 2, Data(Large)), .. Varint(4 << 3 | 0), .. Varint(1)]);

        ClientFrame received = Deserialize(marshaller.ClientFrames, input, segmentSize: 1000);

        Assert.NotNull(received.Rented);
        Assert.Equal(ClientFrame.Parser.ParseFrom(input), received);
        Assert.Equal(input, received.ToByteArray());
    }

    [Fact]
    public void Deserialize_LargeWriteWithTraceparentBeforeItsData_PooledAndTheTraceparentKept()
    {
        // The generated serializer writes traceparent (field 5) after data (field 3); another
        // implementation may write it first. Either way the data is pooled and the field read.
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, LinkMarshaller.DefaultPooledThreshold);
        byte[] traceparent = System.Text.Encoding.UTF8.GetBytes(Traceparent);
        byte[] input = Field(5, 2, [.. Field(5, 2, traceparent), .. Varint(1 << 3 | 0), .. Varint(4), .. Field(3, 2, Data(Large))]);

        ClientFrame received = Deserialize(marshaller.ClientFrames, input, segmentSize: 1000);

        Assert.NotNull(received.Rented);
        Assert.Equal(Traceparent, received.Write.Traceparent);
        Assert.Equal(ClientFrame.Parser.ParseFrom(input), received);
        received.TakeRented()?.Return();
        pool.AssertAllReturnedOnce();
    }

    [Fact]
    public void RentedBuffer_ReturnedTwice_GoesBackToThePoolOnce()
    {
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, 0);
        byte[] bytes = new ClientFrame { Chunk = new Chunk { OpId = 1, Data = ByteString.CopyFrom(Data(10)) } }.ToByteArray();
        ClientFrame received = Deserialize(marshaller.ClientFrames, bytes, segmentSize: bytes.Length);

        RentedBuffer rented = received.TakeRented()!;
        rented.Return();
        rented.Return();

        Assert.Null(received.Rented);
        Assert.Equal(1, pool.Returns);
        Assert.Equal(0, pool.Misreturns);
    }

    [Fact]
    public void Deserialize_EncodingsOtherThanThePlainShape_MeanWhatProtobufSays()
    {
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, 0);
        byte[] data = Data(300);
        byte[] write = Field(3, 2, Bytes(data));
        byte[][] clientInputs =
        [
            Field(5, 2, [.. Varint(2 << 3 | 0), .. Varint(7), .. write, .. Varint(1 << 3 | 0), .. Varint(4)]),   // fields out of order
            Field(5, 2, [.. Varint(1 << 3 | 0), .. Varint(4), .. write, .. Field(3, 2, Bytes([1, 2]))]),        // data twice: the last wins
            Field(5, 2, [.. Varint(1 << 3 | 0), .. Varint(4), .. write, .. Varint(9 << 3 | 0), .. Varint(1)]),  // an unknown field
            Field(5, 2, [.. Field(7, 2, [1, 2]), .. Varint(6 << 3 | 1), 1, 2, 3, 4, 5, 6, 7, 8, .. Varint(8 << 3 | 5), 1, 2, 3, 4, .. write]), // unknown fields of every wire type
            Field(5, 2, [.. Varint(1 << 3 | 3), .. write]),                                                     // a group (not in proto3)
            Field(5, 2, [.. Varint(1 << 3 | 0), .. Varint(4), .. Varint(2 << 3 | 0), .. Varint(ulong.MaxValue), .. write]), // a ten-byte varint
            Field(5, 2, [.. Varint(1 << 3 | 0), .. Varint(1UL << 40 | 6), .. write]),                          // a uint32 past 32 bits
            [.. Field(5, 2, write), .. Field(4, 2, [.. Varint(1 << 3 | 0), .. Varint(5)])],                    // a second body replaces the first
            [.. Field(5, 2, write), .. Field(5, 2, [.. Varint(1 << 3 | 0), .. Varint(5)])],                    // a body twice: merged
            Field(4, 2, [.. Varint(1 << 3 | 0), .. Varint(8), .. Field(2, 0, Varint(3))]),                     // data with the wrong wire type
            [.. Varint(5 << 3 | 2), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, .. write],      // an overlong length
        ];
        byte[][] homeInputs =
        [
            Field(4, 2, [.. Varint(1 << 3 | 0), .. Varint(3), .. Varint(2 << 3 | 0), .. Varint(99), .. Varint(3 << 3 | 0), .. Varint(unchecked((ulong)-5)), .. Field(6, 2, Bytes(data))]),
            Field(4, 2, [.. Varint(1 << 3 | 0), .. Varint(3), .. Field(4, 2, "why"u8.ToArray()), .. Field(6, 2, Bytes(data))]),
            Field(6, 2, [.. Varint(1 << 3 | 0), .. Varint(3), .. Field(2, 2, Bytes(data)), .. Varint(2 << 3 | 0), .. Varint(1)]),
        ];

        foreach (byte[] input in clientInputs)
        {
            AssertAgreesWithProtobuf(marshaller.ClientFrames, ClientFrame.Parser, input, segmentSize: 5);
        }

        foreach (byte[] input in homeInputs)
        {
            AssertAgreesWithProtobuf(marshaller.HomeFrames, HomeFrame.Parser, input, segmentSize: 5);
        }

        pool.AssertAllReturnedOnce();
    }

    [Fact]
    public void Deserialize_EveryTruncationOfALargeFrame_FailsAsProtobufDoesAndLeavesNothingRented()
    {
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, 0);
        byte[] whole = new HomeFrame { Completed = new Completed { OpId = 300, Outcome = Outcome.Ok, Status = 0, Count = 2, Data = ByteString.CopyFrom(Data(200)) } }.ToByteArray();
        int failures = 0;
        for (int length = 0; length < whole.Length; length++)
        {
            failures += AssertAgreesWithProtobuf(marshaller.HomeFrames, HomeFrame.Parser, whole[..length], segmentSize: 3) ? 0 : 1;
        }

        Assert.True(failures > whole.Length / 2, $"Only {failures} truncations were rejected.");
        pool.AssertAllReturnedOnce();
    }

    [Fact]
    public void Deserialize_TwentyThousandMutatedFrames_AgreeWithProtobufAndReturnEveryArray()
    {
        var pool = new CountingPool();
        var marshaller = new LinkMarshaller(pool, 0);
        var random = new Random(20261123);
        byte[][] clientValid = [.. ClientFrames(Data(50)).Select(f => f.ToByteArray())];
        byte[][] homeValid = [.. HomeFrames(Data(50)).Select(f => f.ToByteArray())];
        for (int i = 0; i < 20_000; i++)
        {
            bool home = (i & 1) == 1;
            byte[][] valid = home ? homeValid : clientValid;
            byte[] input = Mutate(valid[random.Next(valid.Length)], random);
            int segmentSize = 1 + random.Next(input.Length + 1);
            if (home)
            {
                AssertAgreesWithProtobuf(marshaller.HomeFrames, HomeFrame.Parser, input, segmentSize);
            }
            else
            {
                AssertAgreesWithProtobuf(marshaller.ClientFrames, ClientFrame.Parser, input, segmentSize);
            }
        }

        Assert.True(pool.Rents > 1000, $"Only {pool.Rents} mutated frames took the pooled path.");
        pool.AssertAllReturnedOnce();
    }

    [Fact(Timeout = 10_000)]
    public async Task PendingOp_ReadAnsweredInChunks_KeepsTheArraysUntilTheReaderReleasesThemOnce()
    {
        var pool = new CountingPool();
        var op = new PendingOp(1, long.MaxValue, reserves: false, reads: true);
        (ByteString first, RentedBuffer firstArray) = Rented(pool, [1, 2, 3]);
        (ByteString last, RentedBuffer lastArray) = Rented(pool, [4, 5]);

        Assert.True(op.AddChunk(first, firstArray));
        op.Complete(new Completed { OpId = 1, Outcome = Outcome.Ok, Data = last }, lastArray);
        Completion completion = await op.Task;

        Assert.Equal(2, pool.Outstanding);
        Assert.Equal(new byte[] { 1, 2, 3, 4, 5 }, completion.Value.ToArray());
        completion.ReleaseValue();
        completion.ReleaseValue();
        pool.AssertAllReturnedOnce();
    }

    [Fact(Timeout = 10_000)]
    public async Task PendingOp_AnswerWithAValueNobodyReads_ReturnsItsArraysAtOnce()
    {
        var pool = new CountingPool();
        var op = new PendingOp(1, long.MaxValue, reserves: false);
        (ByteString first, RentedBuffer firstArray) = Rented(pool, [1]);
        (ByteString last, RentedBuffer lastArray) = Rented(pool, [2]);

        op.AddChunk(first, firstArray);
        op.Complete(new Completed { OpId = 1, Outcome = Outcome.Ok, Data = last }, lastArray);

        Assert.True((await op.Task).Value.IsEmpty);
        Assert.Equal(0, pool.Outstanding);
    }

    [Fact(Timeout = 10_000)]
    public async Task PendingOp_FailedWithChunksInFlight_ReturnsThemAndEveryLaterPart()
    {
        var pool = new CountingPool();
        var op = new PendingOp(1, long.MaxValue, reserves: true, reads: true);
        (ByteString first, RentedBuffer firstArray) = Rented(pool, [1]);
        op.AddChunk(first, firstArray);

        op.Fail(new PeerLostException("gone"));
        Assert.Equal(0, pool.Outstanding);

        // The link's reader may still hold the operation: what it adds now goes straight back.
        (ByteString late, RentedBuffer lateArray) = Rented(pool, [2]);
        Assert.True(op.AddChunk(late, lateArray));
        (ByteString reserved, RentedBuffer reservedArray) = Rented(pool, [3]);
        op.SetReserved(reserved, reservedArray);
        (ByteString answer, RentedBuffer answerArray) = Rented(pool, [4]);
        op.Complete(new Completed { OpId = 1, Outcome = Outcome.Ok, Data = answer }, answerArray);

        Assert.False(op.Reserved.IsCompleted);
        Assert.NotNull((await op.Task).Lost);
        pool.AssertAllReturnedOnce();
    }

    [Fact(Timeout = 10_000)]
    public async Task PendingOp_ReservedValue_KeptUntilReleasedOnceAndASecondOneReturnedAtOnce()
    {
        var pool = new CountingPool();
        var op = new PendingOp(1, long.MaxValue, reserves: true);
        (ByteString first, RentedBuffer firstArray) = Rented(pool, [7, 8]);
        (ByteString last, RentedBuffer lastArray) = Rented(pool, [9]);
        op.AddChunk(first, firstArray);
        op.SetReserved(last, lastArray);

        Assert.Equal(new byte[] { 7, 8, 9 }, (await op.Reserved).ToArray());
        (ByteString again, RentedBuffer againArray) = Rented(pool, [1]);
        op.SetReserved(again, againArray);
        Assert.Equal(2, pool.Outstanding);

        op.ReleaseReserved();
        op.ReleaseReserved();
        pool.AssertAllReturnedOnce();
    }

    [Fact]
    public void ValueAssembler_OversizedPart_KeepsItsArrayForRelease()
    {
        var pool = new CountingPool();
        var assembler = new ValueAssembler(maxSize: 2);
        (ByteString part, RentedBuffer array) = Rented(pool, [1, 2, 3]);

        Assert.False(assembler.TryAdd(part, array));
        assembler.Release();

        Assert.Equal(0, pool.Outstanding);
        Assert.Equal(1, pool.Returns);
    }

    private static IEnumerable<ClientFrame> ClientFrames(byte[] data)
    {
        ByteString bytes = ByteString.CopyFrom(data);
        yield return new ClientFrame { Hello = new Hello { ProtocolVersion = 1, Incarnation = "i", Program = "p" } };
        yield return new ClientFrame { Attach = new Attach { Handle = 1, Name = "n", Kind = "one2one", ValueType = "bytes", Role = Role.Writer } };
        yield return new ClientFrame { Detach = new Detach { Handle = 2 } };
        yield return new ClientFrame { Chunk = new Chunk { OpId = 3, Data = bytes } };
        yield return new ClientFrame { Chunk = new Chunk { OpId = 0, Data = bytes } };
        yield return new ClientFrame { Write = new Write { Handle = uint.MaxValue, OpId = ulong.MaxValue, Data = bytes } };
        yield return new ClientFrame { Write = new Write { Data = bytes } };
        yield return new ClientFrame { Write = new Write { Handle = 1, OpId = 2, Data = bytes, Credited = true, Traceparent = Traceparent } };
        yield return new ClientFrame { Read = new Read { Handle = 4, OpId = 5 } };
        yield return new ClientFrame { Cancel = new Cancel { OpId = 6 } };
        yield return new ClientFrame { Poison = new Poison { Handle = 7 } };
        yield return new ClientFrame { Sync = new SyncOp { Handle = 8, OpId = 9, Kind = SyncKind.BucketFlush } };
        yield return new ClientFrame { Watch = new Watch { Handle = 10, OpId = 11 } };
        yield return new ClientFrame { Reserve = new Reserve { Handle = 12, OpId = 13, Wait = true } };
        yield return new ClientFrame { Settle = new Settle { OpId = 14, Accept = true } };
        yield return new ClientFrame();
    }

    private static IEnumerable<HomeFrame> HomeFrames(byte[] data)
    {
        ByteString bytes = ByteString.CopyFrom(data);
        yield return new HomeFrame { Hello = new Hello { ProtocolVersion = 1, Incarnation = "i", Program = "p" } };
        yield return new HomeFrame { Attached = new Attached { Handle = 1, Status = 9, Message = "no" } };
        yield return new HomeFrame { Chunk = new Chunk { OpId = 2, Data = bytes } };
        yield return new HomeFrame { Completed = new Completed { OpId = 3, Outcome = Outcome.Ok, Data = bytes } };
        yield return new HomeFrame { Completed = new Completed { OpId = ulong.MaxValue, Outcome = (Outcome)77, Status = -1, Count = int.MinValue, Data = bytes } };
        yield return new HomeFrame { Completed = new Completed { OpId = 4, Outcome = Outcome.Error, Status = 3, Message = "bad", Data = bytes } };
        yield return new HomeFrame { Completed = new Completed { OpId = 5, Outcome = Outcome.Poisoned, Message = "poisoned" } };
        yield return new HomeFrame { Ready = new Ready { OpId = 6 } };
        yield return new HomeFrame { Reserved = new Reserved { OpId = 7, Data = bytes } };
        yield return new HomeFrame();
    }

    private static byte[] Data(int size)
    {
        var data = new byte[size];
        new Random(size).NextBytes(data);
        return data;
    }

    private static (ByteString Part, RentedBuffer Array) Rented(CountingPool pool, byte[] bytes)
    {
        byte[] array = pool.Rent(bytes.Length);
        bytes.CopyTo(array, 0);
        return (UnsafeByteOperations.UnsafeWrap(array.AsMemory(0, bytes.Length)), new RentedBuffer(pool, array));
    }

    private static byte[] Serialize<T>(Marshaller<T> marshaller, T frame)
    {
        var context = new BufferSerializationContext();
        marshaller.ContextualSerializer(frame, context);
        Assert.Equal(context.PayloadLength, context.Payload.Length);
        return context.Payload;
    }

    private static T Deserialize<T>(Marshaller<T> marshaller, byte[] bytes, int segmentSize) =>
        marshaller.ContextualDeserializer(new SequenceDeserializationContext(Chained(bytes, segmentSize)));

    private static void AssertRoundTrips<T>(Marshaller<T> marshaller, T frame, CountingPool pool)
        where T : IMessage<T>, IPooledFrame
    {
        byte[] bytes = frame.ToByteArray();
        foreach (int segmentSize in new[] { Math.Max(bytes.Length, 1), 1000, 3 })
        {
            T received = Deserialize(marshaller, bytes, segmentSize);
            Assert.Equal(frame, received);
            Assert.Equal(bytes, received.ToByteArray());
            received.TakeRented()?.Return();
            Assert.Equal(0, pool.Outstanding);
        }
    }

    /// <summary>
    /// The marshaller and protobuf's parser agree on <paramref name="input"/>: both reject it with
    /// <see cref="InvalidProtocolBufferException"/>, or both read the same frame. True if it was read.
    /// </summary>
    private static bool AssertAgreesWithProtobuf<T>(Marshaller<T> marshaller, MessageParser<T> parser, byte[] input, int segmentSize)
        where T : IMessage<T>, IPooledFrame
    {
        T expected;
        try
        {
            expected = parser.ParseFrom(input);
        }
        catch (InvalidProtocolBufferException)
        {
            Assert.Throws<InvalidProtocolBufferException>(() => Deserialize(marshaller, input, segmentSize));
            return false;
        }

        T received = Deserialize(marshaller, input, segmentSize);
        Assert.Equal(expected, received);
        received.TakeRented()?.Return();
        return true;
    }

    private static byte[] Mutate(byte[] valid, Random random)
    {
        var bytes = new List<byte>(valid);
        int edits = 1 + random.Next(3);
        for (int i = 0; i < edits; i++)
        {
            int at = random.Next(bytes.Count + 1);
            switch (random.Next(5))
            {
                case 0 when at < bytes.Count:
                    bytes[at] ^= (byte)(1 << random.Next(8));
                    break;
                case 1 when at < bytes.Count:
                    bytes[at] = (byte)random.Next(256);
                    break;
                case 2:
                    bytes.Insert(at, (byte)random.Next(256));
                    break;
                case 3 when at < bytes.Count:
                    bytes.RemoveAt(at);
                    break;
                default:
                    bytes.RemoveRange(at, bytes.Count - at);
                    break;
            }
        }

        return [.. bytes];
    }

    private static byte[] Varint(ulong value)
    {
        var bytes = new List<byte>();
        for (; value >= 0x80; value >>= 7)
        {
            bytes.Add((byte)(value | 0x80));
        }

        bytes.Add((byte)value);
        return [.. bytes];
    }

    private static byte[] Bytes(byte[] data) => [.. Varint((ulong)data.Length), .. data];

    /// <summary>A field: its tag, then <paramref name="payload"/> (a length-delimited payload gets its length here).</summary>
    private static byte[] Field(int number, int wireType, byte[] payload) =>
        wireType == 2 ? [.. Varint((ulong)(number << 3 | 2)), .. Bytes(payload)] : [.. Varint((ulong)(number << 3 | wireType)), .. payload];

    /// <summary>A pool that hands out new arrays and counts what comes back, and what comes back wrongly.</summary>
    private sealed class CountingPool : ArrayPool<byte>
    {
        private readonly HashSet<byte[]> _rented = new(ReferenceEqualityComparer.Instance);

        public int Rents { get; private set; }

        public int Returns { get; private set; }

        /// <summary>Arrays returned that were not out: returned twice, or never rented here.</summary>
        public int Misreturns { get; private set; }

        public int Outstanding
        {
            get
            {
                lock (_rented)
                {
                    return _rented.Count;
                }
            }
        }

        /// <summary>Every array rented came back, and none came back twice.</summary>
        public void AssertAllReturnedOnce()
        {
            Assert.Equal(0, Outstanding);
            Assert.Equal(0, Misreturns);
        }

        public bool IsRented(byte[] array)
        {
            lock (_rented)
            {
                return _rented.Contains(array);
            }
        }

        public override byte[] Rent(int minimumLength)
        {
            var array = new byte[minimumLength + 3]; // larger, as real pools' arrays are
            lock (_rented)
            {
                Rents++;
                _rented.Add(array);
            }

            return array;
        }

        public override void Return(byte[] array, bool clearArray = false)
        {
            lock (_rented)
            {
                Returns++;
                if (!_rented.Remove(array))
                {
                    Misreturns++;
                }
            }
        }
    }

    private sealed class BufferSerializationContext : SerializationContext
    {
        private readonly ArrayBufferWriter<byte> _writer = new();

        public int PayloadLength { get; private set; } = -1;

        public byte[] Payload { get; private set; } = [];

        public override void SetPayloadLength(int payloadLength) => PayloadLength = payloadLength;

        public override IBufferWriter<byte> GetBufferWriter() => _writer;

        public override void Complete() => Payload = _writer.WrittenSpan.ToArray();

        public override void Complete(byte[] payload) => Payload = payload;
    }

    private sealed class SequenceDeserializationContext(ReadOnlySequence<byte> payload) : DeserializationContext
    {
        public override int PayloadLength => (int)payload.Length;

        public override ReadOnlySequence<byte> PayloadAsReadOnlySequence() => payload;

        public override byte[] PayloadAsNewBuffer() => payload.ToArray();
    }
}
