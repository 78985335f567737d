using CspNet.Remote.Internal.Serialization;
using static CspNet.Remote.Tests.Serialization.CodecTestSupport;

namespace CspNet.Remote.Tests.Serialization;

public class NullableCodecTests
{
    public readonly record struct Point(int X, int Y);

    [Fact]
    public void WireName_Nullables_PrefixOptToInnerName()
    {
        Assert.Equal("opt:int32", ValueCodec<int?>.Get().WireName);
        Assert.Equal("opt:bool", ValueCodec<bool?>.Get().WireName);
        Assert.Equal("opt:double", ValueCodec<double?>.Get().WireName);
        Assert.Equal("opt:json:CspNet.Remote.Tests.Serialization.NullableCodecTests+Point", ValueCodec<Point?>.Get().WireName);
    }

    [Fact]
    public void Int32Nullable_Write_IsPresenceByteThenFixedWidth()
    {
        Assert.Equal(new byte[] { 0 }, Encode<int?>(null));
        Assert.Equal(new byte[] { 1, 5, 0, 0, 0 }, Encode<int?>(5));
    }

    [Fact]
    public void Nullables_RoundTrip_KeepValueOrNull()
    {
        Assert.Null(RoundTrip<int?>(null));
        Assert.Equal(int.MinValue, RoundTrip<int?>(int.MinValue));
        Assert.Equal(ulong.MaxValue, RoundTrip<ulong?>(ulong.MaxValue));
        Assert.True(RoundTrip<bool?>(true));
        Assert.Null(RoundTrip<double?>(null));
        Assert.Equal(new Point(1, -2), RoundTrip<Point?>(new Point(1, -2)));
        Assert.Null(RoundTrip<Point?>(null));
    }

    [Theory]
    [InlineData(new byte[0])]
    [InlineData(new byte[] { 2 })]
    [InlineData(new byte[] { 0, 0 })]
    [InlineData(new byte[] { 1 })]
    [InlineData(new byte[] { 1, 1, 2 })]
    [InlineData(new byte[] { 1, 1, 2, 3, 4, 5 })]
    public void Int32Nullable_MalformedInput_ReadThrowsInvalidData(byte[] bytes) =>
        Assert.Throws<InvalidDataException>(() => Decode<int?>(bytes));
}
