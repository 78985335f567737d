using System.Buffers;
using System.Buffers.Binary;
using CspNet.Remote.Internal.Serialization;
using static CspNet.Remote.Tests.Serialization.CodecTestSupport;

namespace CspNet.Remote.Tests.Serialization;

// Registration is process-wide and permanent, so every test uses types of its own.
public class CustomCodecTests
{
    public readonly record struct Celsius(int Tenths);

    public sealed record Preferred(int Value);

    public sealed record UsedFirst(int Value);

    public sealed record RegisteredTwice(int Value);

    public sealed record Throwing(int Value);

    public sealed record Unnamed(int Value);

    public interface IOpaque
    {
        int Value { get; }
    }

    private sealed record Opaque(int Value) : IOpaque;

    /// <summary>A four-byte big-endian encoding, unlike anything built in.</summary>
    private sealed class Int32BigEndianCodec<T>(string wireName, Func<T, int> get, Func<int, T> make) : ICspCodec<T>
    {
        public string WireName => wireName;

        public void Write(T value, IBufferWriter<byte> output)
        {
            BinaryPrimitives.WriteInt32BigEndian(output.GetSpan(4), get(value));
            output.Advance(4);
        }

        public T Read(ReadOnlySequence<byte> input)
        {
            if (input.Length != 4)
            {
                throw new InvalidDataException("need four bytes");
            }

            Span<byte> bytes = stackalloc byte[4];
            input.CopyTo(bytes);
            return make(BinaryPrimitives.ReadInt32BigEndian(bytes));
        }
    }

    private sealed class FailingCodec : ICspCodec<Throwing>
    {
        public string WireName => "failing";

        public void Write(Throwing value, IBufferWriter<byte> output) => output.Advance(0);

        public Throwing Read(ReadOnlySequence<byte> input) => throw new FormatException("third-party failure");
    }

    [Fact]
    public void Register_BeforeFirstUse_RegisteredCodecTakesPrecedence()
    {
        CspSerializers.Register(new Int32BigEndianCodec<Preferred>("be32:preferred", p => p.Value, v => new Preferred(v)));

        ValueCodec<Preferred> codec = ValueCodec<Preferred>.Get();

        Assert.Equal("be32:preferred", codec.WireName);
        Assert.Equal(new byte[] { 0, 0, 1, 2 }, Encode(new Preferred(258)));
        Assert.Equal(new Preferred(258), RoundTrip(new Preferred(258)));
    }

    [Fact]
    public void Register_ValueType_AlsoServesItsNullable()
    {
        CspSerializers.Register(new Int32BigEndianCodec<Celsius>("be32:celsius", c => c.Tenths, v => new Celsius(v)));

        Assert.Equal("opt:be32:celsius", ValueCodec<Celsius?>.Get().WireName);
        Assert.Equal(new byte[] { 1, 0, 0, 0, 215 }, Encode<Celsius?>(new Celsius(215)));
        Assert.Equal(new Celsius(-40), RoundTrip<Celsius?>(new Celsius(-40)));
        Assert.Null(RoundTrip<Celsius?>(null));
    }

    [Fact]
    public void Register_AfterFirstUse_ThrowsInvalidOperation()
    {
        _ = ValueCodec<UsedFirst>.Get();

        InvalidOperationException e = Assert.Throws<InvalidOperationException>(() =>
            CspSerializers.Register(new Int32BigEndianCodec<UsedFirst>("be32:late", u => u.Value, v => new UsedFirst(v))));

        Assert.Contains("already use", e.Message, StringComparison.Ordinal);
        Assert.StartsWith("json:", ValueCodec<UsedFirst>.Get().WireName, StringComparison.Ordinal);
    }

    [Fact]
    public void Register_Twice_ThrowsInvalidOperation()
    {
        CspSerializers.Register(new Int32BigEndianCodec<RegisteredTwice>("be32:a", r => r.Value, v => new RegisteredTwice(v)));

        Assert.Throws<InvalidOperationException>(() =>
            CspSerializers.Register(new Int32BigEndianCodec<RegisteredTwice>("be32:b", r => r.Value, v => new RegisteredTwice(v))));
        Assert.Equal("be32:a", ValueCodec<RegisteredTwice>.Get().WireName);
    }

    [Fact]
    public void Register_TypeRefusedBefore_MakesItCross()
    {
        Assert.Throws<NotSupportedException>(() => ValueCodec<IOpaque>.Get());

        CspSerializers.Register(new Int32BigEndianCodec<IOpaque>("be32:opaque", o => o.Value, v => new Opaque(v)));

        Assert.Equal(7, RoundTrip<IOpaque>(new Opaque(7)).Value);
    }

    [Fact]
    public void Register_InvalidArguments_Throw()
    {
        Assert.Throws<ArgumentNullException>(() => CspSerializers.Register<Unnamed>(null!));
        Assert.Throws<ArgumentException>(() =>
            CspSerializers.Register(new Int32BigEndianCodec<Unnamed>(" ", u => u.Value, v => new Unnamed(v))));
    }

    [Fact]
    public void Read_RegisteredCodecThrowsOtherException_WrappedInInvalidData()
    {
        CspSerializers.Register(new FailingCodec());

        InvalidDataException e = Assert.Throws<InvalidDataException>(() => Decode<Throwing>([1, 2, 3]));

        Assert.IsType<FormatException>(e.InnerException);
        Assert.Contains("failing", e.Message, StringComparison.Ordinal);
    }
}
