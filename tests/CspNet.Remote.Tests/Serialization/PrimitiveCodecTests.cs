using CspNet.Remote.Internal.Serialization;
using static CspNet.Remote.Tests.Serialization.CodecTestSupport;

namespace CspNet.Remote.Tests.Serialization;

public class PrimitiveCodecTests
{
    [Fact]
    public void WireName_EachBuiltInType_MatchesLinkProto()
    {
        Assert.Equal("bool", ValueCodec<bool>.Get().WireName);
        Assert.Equal("int32", ValueCodec<int>.Get().WireName);
        Assert.Equal("int64", ValueCodec<long>.Get().WireName);
        Assert.Equal("uint32", ValueCodec<uint>.Get().WireName);
        Assert.Equal("uint64", ValueCodec<ulong>.Get().WireName);
        Assert.Equal("float", ValueCodec<float>.Get().WireName);
        Assert.Equal("double", ValueCodec<double>.Get().WireName);
        Assert.Equal("string", ValueCodec<string>.Get().WireName);
        Assert.Equal("bytes", ValueCodec<byte[]>.Get().WireName);
    }

    [Fact]
    public void Get_CalledTwice_ReturnsSameInstance() => Assert.Same(ValueCodec<int>.Get(), ValueCodec<int>.Get());

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Bool_RoundTrip_KeepsValue(bool value) => Assert.Equal(value, RoundTrip(value));

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(-1)]
    [InlineData(int.MinValue)]
    [InlineData(int.MaxValue)]
    public void Int32_RoundTrip_KeepsValue(int value) => Assert.Equal(value, RoundTrip(value));

    [Theory]
    [InlineData(0L)]
    [InlineData(-1L)]
    [InlineData(long.MinValue)]
    [InlineData(long.MaxValue)]
    public void Int64_RoundTrip_KeepsValue(long value) => Assert.Equal(value, RoundTrip(value));

    [Theory]
    [InlineData(0u)]
    [InlineData(1u)]
    [InlineData(uint.MaxValue)]
    public void UInt32_RoundTrip_KeepsValue(uint value) => Assert.Equal(value, RoundTrip(value));

    [Theory]
    [InlineData(0ul)]
    [InlineData(1ul)]
    [InlineData(ulong.MaxValue)]
    public void UInt64_RoundTrip_KeepsValue(ulong value) => Assert.Equal(value, RoundTrip(value));

    [Theory]
    [InlineData(0f, 0d)]
    [InlineData(float.Epsilon, double.Epsilon)]
    [InlineData(float.MinValue, double.MinValue)]
    [InlineData(float.MaxValue, double.MaxValue)]
    [InlineData(float.PositiveInfinity, double.PositiveInfinity)]
    [InlineData(float.NegativeInfinity, double.NegativeInfinity)]
    [InlineData(float.NaN, double.NaN)]
    [InlineData(MathF.PI, Math.PI)]
    public void FloatingPoint_RoundTrip_KeepsBits(float narrow, double wide)
    {
        Assert.Equal(BitConverter.SingleToInt32Bits(narrow), BitConverter.SingleToInt32Bits(RoundTrip(narrow)));
        Assert.Equal(BitConverter.DoubleToInt64Bits(wide), BitConverter.DoubleToInt64Bits(RoundTrip(wide)));
    }

    [Fact]
    public void FloatingPoint_NegativeZero_KeepsSign()
    {
        Assert.True(float.IsNegative(RoundTrip(-0f)));
        Assert.True(double.IsNegative(RoundTrip(-0d)));
    }

    [Fact]
    public void Single_NaNWithPayload_KeepsPayload()
    {
        float quietNaNWithPayload = BitConverter.Int32BitsToSingle(0x7FC0_1234);
        Assert.Equal(0x7FC0_1234, BitConverter.SingleToInt32Bits(RoundTrip(quietNaNWithPayload)));
    }

    [Fact]
    public void Write_Integers_AreFixedWidthLittleEndian()
    {
        Assert.Equal(new byte[] { 0x04, 0x03, 0x02, 0x01 }, Encode(0x01020304));
        Assert.Equal(new byte[] { 0xFF, 0xFF, 0xFF, 0xFF }, Encode(-1));
        Assert.Equal(new byte[] { 1, 0, 0, 0, 0, 0, 0, 0 }, Encode(1L));
        Assert.Equal(new byte[] { 0, 0, 0, 0x80 }, Encode(0x8000_0000u));
        Assert.Equal(new byte[] { 0, 0, 0, 0, 0, 0, 0, 0x80 }, Encode(0x8000_0000_0000_0000ul));
    }

    [Fact]
    public void Write_BoolAndFloats_AreDocumentedBytes()
    {
        Assert.Equal(new byte[] { 1 }, Encode(true));
        Assert.Equal(new byte[] { 0 }, Encode(false));
        Assert.Equal(new byte[] { 0, 0, 0x80, 0x3F }, Encode(1f));
        Assert.Equal(new byte[] { 0, 0, 0, 0, 0, 0, 0xF0, 0x3F }, Encode(1d));
    }
}
