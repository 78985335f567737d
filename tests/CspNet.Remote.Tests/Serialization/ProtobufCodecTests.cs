using CspNet.Remote.Internal.Serialization;
using Google.Protobuf;
using Google.Protobuf.WellKnownTypes;
using static CspNet.Remote.Tests.Serialization.CodecTestSupport;

namespace CspNet.Remote.Tests.Serialization;

public class ProtobufCodecTests
{
    private static Struct SampleStruct()
    {
        Struct nested = new();
        nested.Fields["pi"] = Value.ForNumber(Math.PI);
        nested.Fields["list"] = Value.ForList(Value.ForString("日本"), Value.ForBool(true), Value.ForNull());
        Struct root = new();
        root.Fields["name"] = Value.ForString("order-1");
        root.Fields["nested"] = Value.ForStruct(nested);
        return root;
    }

    [Fact]
    public void WireName_Messages_AreDescriptorFullNames()
    {
        Assert.Equal("pb:google.protobuf.Timestamp", ValueCodec<Timestamp>.Get().WireName);
        Assert.Equal("pb:google.protobuf.Struct", ValueCodec<Struct>.Get().WireName);
    }

    [Fact]
    public void Timestamp_RoundTrip_KeepsValue()
    {
        Timestamp value = new() { Seconds = 1_700_000_000, Nanos = 123_456_789 };
        Assert.Equal(value, RoundTrip(value));
        Assert.Equal(new Timestamp(), RoundTrip(new Timestamp()));
    }

    [Fact]
    public void Struct_RoundTrip_KeepsNestedValues()
    {
        Struct value = SampleStruct();
        byte[] encoded = Encode(value);
        Assert.Equal(value, Decode<Struct>(encoded));
        Assert.Equal(value, ValueCodec<Struct>.Get().Read(Chained(encoded, 1)));
        Assert.Equal(value, ValueCodec<Struct>.Get().Read(Chained(encoded, 7)));
    }

    [Fact]
    public void Write_Message_IsPresenceByteThenProtobufBinary()
    {
        Struct value = SampleStruct();
        Assert.Equal(new byte[] { 1 }.Concat(value.ToByteArray()), Encode(value));
    }

    [Fact]
    public void Null_RoundTrip_IsOneZeroByte()
    {
        Assert.Equal(new byte[] { 0 }, Encode<Timestamp?>(null));
        Assert.Null(Decode<Timestamp?>([0]));
    }

    [Theory]
    [InlineData(new byte[0])]
    [InlineData(new byte[] { 3 })]
    [InlineData(new byte[] { 1, 0x08 })]
    [InlineData(new byte[] { 1, 0x0A, 0x05, 0x01 })]
    [InlineData(new byte[] { 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF })]
    public void Struct_MalformedInput_ReadThrowsInvalidData(byte[] bytes) =>
        Assert.Throws<InvalidDataException>(() => Decode<Struct>(bytes));
}
