using System.Buffers;
using CspNet.Remote.Internal.Serialization;
using static CspNet.Remote.Tests.Serialization.CodecTestSupport;

namespace CspNet.Remote.Tests.Serialization;

public class StringAndBytesCodecTests
{
    [Theory]
    [InlineData("")]
    [InlineData("a")]
    [InlineData("hello, world")]
    [InlineData("héllo wörld ñ")]
    [InlineData("日本語のテキスト")]
    [InlineData("emoji 🎉👩‍👩‍👧 and 𝄞")]
    [InlineData("nul\0inside")]
    public void String_RoundTrip_KeepsText(string value) => Assert.Equal(value, RoundTrip(value));

    [Fact]
    public void String_Null_RoundTripsAsNull()
    {
        Assert.Equal(new byte[] { 0 }, Encode<string?>(null));
        Assert.Null(RoundTrip<string?>(null));
    }

    [Fact]
    public void String_Write_IsPresenceByteThenUtf8()
    {
        Assert.Equal(new byte[] { 1 }, Encode(""));
        Assert.Equal(new byte[] { 1, 0xC3, 0xA9 }, Encode("é"));
    }

    [Fact]
    public void String_Large_RoundTrips()
    {
        string value = string.Concat(Enumerable.Repeat("abc日本🎉", 50_000));
        Assert.Equal(value, Decode<string>(Encode(value)));
        Assert.Equal(value, ValueCodec<string>.Get().Read(Chained(Encode(value), 4096 + 1)));
    }

    [Fact]
    public void String_LoneSurrogate_WriteThrowsArgumentException()
    {
        ArrayBufferWriter<byte> output = new();
        Assert.Throws<ArgumentException>(() => ValueCodec<string>.Get().Write("bad \uD800 text", output));
    }

    [Theory]
    [InlineData(new byte[] { 1, 0xFF })]
    [InlineData(new byte[] { 1, 0xC3 })]
    [InlineData(new byte[] { 1, 0xED, 0xA0, 0x80 })]
    [InlineData(new byte[] { 1, (byte)'a', 0xE6, 0x97 })]
    public void String_InvalidUtf8_ReadThrowsInvalidData(byte[] bytes)
    {
        Assert.Throws<InvalidDataException>(() => Decode<string>(bytes));
        Assert.Throws<InvalidDataException>(() => ValueCodec<string>.Get().Read(Chained(bytes, 1)));
    }

    [Fact]
    public void Bytes_NullAndEmpty_RoundTripDistinctly()
    {
        Assert.Equal(new byte[] { 0 }, Encode<byte[]?>(null));
        Assert.Equal(new byte[] { 1 }, Encode(Array.Empty<byte>()));
        Assert.Null(RoundTrip<byte[]?>(null));
        Assert.Empty(RoundTrip(Array.Empty<byte>())!);
    }

    [Fact]
    public void Bytes_Small_RoundTrips() =>
        Assert.Equal(new byte[] { 0, 1, 2, 255 }, RoundTrip(new byte[] { 0, 1, 2, 255 }));

    [Fact]
    public void Bytes_FourMegabytes_WrittenWithOneSpanAndReadFromSegments()
    {
        byte[] value = new byte[4 * 1024 * 1024];
        new Random(42).NextBytes(value);
        CountingWriter output = new();

        ValueCodec<byte[]>.Get().Write(value, output);

        Assert.Equal(1, output.SpanRequests);
        Assert.Equal(value.Length + 1, output.Written.WrittenCount);
        byte[] encoded = output.Written.WrittenSpan.ToArray();
        Assert.Equal(value, Decode<byte[]>(encoded));
        Assert.Equal(value, ValueCodec<byte[]>.Get().Read(Chained(encoded, 64 * 1024)));
    }

    [Fact]
    public void Bytes_LargeReadsOverReusedMemory_HoldOnlyTheirOwnBytes()
    {
        // The decoded array is allocated without zeroing; memory freed by earlier values (filled
        // with 0xEE) must never show through, whatever the segment boundaries.
        for (int round = 0; round < 8; round++)
        {
            byte[] garbage = new byte[1024 * 1024];
            Array.Fill(garbage, (byte)0xEE);
            GC.KeepAlive(garbage);
            garbage = null!;
            GC.Collect();

            byte[] value = new byte[(1024 * 1024) + round];
            new Random(round).NextBytes(value);
            byte[] encoded = Encode(value);

            Assert.Equal(value, ValueCodec<byte[]>.Get().Read(Chained(encoded, (16 * 1024) + (round * 7) + 1)));
        }
    }

    /// <summary>Counts GetSpan/GetMemory calls, to show a value was copied in one piece.</summary>
    private sealed class CountingWriter : IBufferWriter<byte>
    {
        public ArrayBufferWriter<byte> Written { get; } = new();

        public int SpanRequests { get; private set; }

        public void Advance(int count) => Written.Advance(count);

        public Memory<byte> GetMemory(int sizeHint = 0)
        {
            SpanRequests++;
            return Written.GetMemory(sizeHint);
        }

        public Span<byte> GetSpan(int sizeHint = 0)
        {
            SpanRequests++;
            return Written.GetSpan(sizeHint);
        }
    }
}
