using System.Buffers;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using CspNet.Remote.Internal.Serialization;
using static CspNet.Remote.Tests.Serialization.CodecTestSupport;

namespace CspNet.Remote.Tests.Serialization;

public class JsonCodecTests
{
    public enum Priority { Low, High }

    public sealed record Line(string Sku, int Quantity, decimal Price);

    public sealed record Order(
        Guid Id,
        string Customer,
        Priority Priority,
        DateTimeOffset Placed,
        List<Line> Lines,
        Dictionary<string, int[]> Tags,
        double Ratio,
        int? Discount,
        string? Note);

    public sealed class Settable
    {
        public int Count { get; set; }

        public List<List<string>> Grid { get; set; } = [];
    }

    // Internal: public fields are what this type tests, and the analyzers refuse them on public types.
    internal struct FieldStruct
    {
        public int A;
        public string B;
    }

    [JsonPolymorphic]
    [JsonDerivedType(typeof(Circle), "circle")]
    [JsonDerivedType(typeof(Square), "square")]
    public abstract record Shape;

    public sealed record Circle(double Radius) : Shape;

    public sealed record Square(double Side) : Shape;

    public sealed record Positive
    {
        public Positive(int value)
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            Value = value;
        }

        public int Value { get; }
    }

    public sealed class Node
    {
        public Node? Next { get; set; }
    }

    private static Order SampleOrder() => new(
        Guid.Parse("0f8fad5b-d9cb-469f-a165-70867728950e"),
        "Zoë 日本 🎉",
        Priority.High,
        new DateTimeOffset(2026, 11, 23, 10, 0, 0, TimeSpan.FromHours(1)),
        [new Line("A-1", 2, 9.99m), new Line("B-2", 1, 0.01m)],
        new Dictionary<string, int[]> { ["x"] = [1, 2, 3], ["empty"] = [] },
        double.NaN,
        null,
        "note");

    [Fact]
    public void WireName_Record_IsJsonPrefixAndFullName() =>
        Assert.Equal("json:CspNet.Remote.Tests.Serialization.JsonCodecTests+Order", ValueCodec<Order>.Get().WireName);

    [Fact]
    public void WireName_GenericTypes_CarryNoAssemblyVersions()
    {
        Assert.Equal("json:System.Collections.Generic.List`1[System.Int32]", ValueCodec<List<int>>.Get().WireName);
        Assert.Equal(
            "json:System.Collections.Generic.Dictionary`2[System.String,System.Collections.Generic.List`1[System.Int32[]]]",
            ValueCodec<Dictionary<string, List<int[]>>>.Get().WireName);
        Assert.Equal("json:System.Int32[,]", ValueCodec<int[,]>.Get().WireName);
    }

    [Fact]
    public void Record_RoundTrip_KeepsNestedCollections()
    {
        Order order = SampleOrder();
        Order read = RoundTrip(order);
        Assert.Equivalent(order, read, strict: true);
        Assert.True(double.IsNaN(read.Ratio));
    }

    [Fact]
    public void Record_Write_IsCompactUtf8Json()
    {
        string json = Encoding.UTF8.GetString(Encode(new Line("日本", 1, 2m)));
        Assert.Equal("{\"Sku\":\"日本\",\"Quantity\":1,\"Price\":2}", json);
    }

    [Fact]
    public void Class_RoundTrip_KeepsSettableProperties()
    {
        Settable value = new() { Count = 3, Grid = [["a"], [], ["b", "c"]] };
        Assert.Equivalent(value, RoundTrip(value), strict: true);
    }

    [Fact]
    public void StructWithFields_RoundTrip_KeepsFields()
    {
        FieldStruct value = new() { A = 7, B = "seven" };
        Assert.Equal(value, RoundTrip(value));
    }

    [Fact]
    public void ValueTuple_RoundTrip_KeepsItems() => Assert.Equal((1, "one"), RoundTrip((1, "one")));

    [Fact]
    public void NestedCollections_RoundTrip_KeepContents()
    {
        Dictionary<string, List<int[]>> value = new() { ["a"] = [[1, 2], []], ["b"] = [] };
        Assert.Equivalent(value, RoundTrip(value), strict: true);
        IReadOnlyList<IReadOnlyDictionary<int, string>> readOnly = [new Dictionary<int, string> { [1] = "x" }];
        Assert.Equivalent(readOnly, RoundTrip(readOnly), strict: true);
    }

    [Fact]
    public void OtherPrimitives_RoundTripThroughJson()
    {
        Assert.Equal(decimal.MaxValue, RoundTrip(decimal.MaxValue));
        Assert.Equal((short)-5, RoundTrip((short)-5));
        Assert.Equal('ß', RoundTrip('ß'));
        Assert.Equal(Priority.High, RoundTrip(Priority.High));
        Assert.Equal(new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc), RoundTrip(new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc)));
        Assert.Equal("json:System.Decimal", ValueCodec<decimal>.Get().WireName);
    }

    [Fact]
    public void Polymorphic_RoundTrip_KeepsDerivedType()
    {
        List<Shape> shapes = [new Circle(1.5), new Square(2)];
        Assert.Equal(shapes, RoundTrip(shapes));
        Assert.Equal(new Square(3), RoundTrip<Shape>(new Square(3)));
    }

    [Fact]
    public void NullReference_RoundTrip_IsJsonNull()
    {
        Assert.Equal("null"u8.ToArray(), Encode<Order?>(null));
        Assert.Null(RoundTrip<Order?>(null));
    }

    [Theory]
    [InlineData("")]
    [InlineData("   ")]
    [InlineData("{")]
    [InlineData("[1,2]")]
    [InlineData("{\"Value\":1} {}")]
    [InlineData("{\"Value\":1}x")]
    [InlineData("{\"Value\":\"one\"}")]
    [InlineData("{\"Value\":-1}")]
    public void Record_MalformedJson_ReadThrowsInvalidData(string json) =>
        Assert.Throws<InvalidDataException>(() => Decode<Positive>(Encoding.UTF8.GetBytes(json)));

    [Fact]
    public void Struct_JsonNull_ReadThrowsInvalidData() =>
        Assert.Throws<InvalidDataException>(() => Decode<FieldStruct>("null"u8.ToArray()));

    [Fact]
    public void Record_TrailingWhiteSpace_IsAccepted() =>
        Assert.Equal(3, Decode<Positive>("{\"Value\":3} \n"u8.ToArray()).Value);

    [Fact]
    public void CyclicGraph_Write_ThrowsArgumentException()
    {
        Node node = new();
        node.Next = node;
        Assert.Throws<ArgumentException>(() => ValueCodec<Node>.Get().Write(node, new ArrayBufferWriter<byte>()));
    }

    [Fact]
    public void Write_AfterFailedWrite_StillWorks()
    {
        Node cyclic = new();
        cyclic.Next = cyclic;
        Assert.Throws<ArgumentException>(() => ValueCodec<Node>.Get().Write(cyclic, new ArrayBufferWriter<byte>()));
        Assert.Equal("{\"Next\":null}"u8.ToArray(), Encode(new Node()));
    }

    [Fact]
    public void JsonElement_RoundTrip_KeepsArbitraryJson()
    {
        JsonElement value = JsonDocument.Parse("{\"a\":[1,\"x\",null]}").RootElement;
        Assert.Equal(value.GetRawText(), RoundTrip(value).GetRawText());
    }
}
