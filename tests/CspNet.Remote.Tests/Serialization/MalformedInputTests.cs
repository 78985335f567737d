using System.Buffers;
using CspNet.Remote.Internal.Serialization;
using Google.Protobuf.WellKnownTypes;
using static CspNet.Remote.Tests.Serialization.CodecTestSupport;

namespace CspNet.Remote.Tests.Serialization;

public class MalformedInputTests
{
    public sealed record Item(string Name, int Count, double Weight, List<string> Tags, Dictionary<string, long>? Extra);

    /// <summary>A codec under test: a valid encoding to mutate, and a reader.</summary>
    private sealed record Subject(string Name, byte[] Valid, Func<ReadOnlySequence<byte>, object?> Read);

    private static Subject For<T>(T sample) =>
        new(ValueCodec<T>.Get().WireName, Encode(sample), input => ValueCodec<T>.Get().Read(input));

    private static List<Subject> Subjects()
    {
        Struct structValue = new();
        structValue.Fields["k"] = Value.ForList(Value.ForNumber(1), Value.ForString("v"));
        return
        [
            For(true),
            For(-12345),
            For(long.MinValue),
            For(7u),
            For(ulong.MaxValue),
            For(1.5f),
            For(-2.25),
            For("héllo 日本 🎉"),
            For(new byte[] { 1, 2, 3, 4, 5 }),
            For<int?>(42),
            For<double?>(null),
            For(new Timestamp { Seconds = 99, Nanos = 5 }),
            For(structValue),
            For(new Item("widget", 3, 0.5, ["a", "b"], new Dictionary<string, long> { ["x"] = long.MaxValue })),
            For(new List<int> { 1, -2, 3 }),
            For(new Dictionary<string, List<double>> { ["p"] = [1.0, 2.0] }),
        ];
    }

    [Theory]
    [InlineData(new byte[0])]
    [InlineData(new byte[] { 1, 2, 3 })]
    [InlineData(new byte[] { 1, 2, 3, 4, 5 })]
    public void Int32_WrongLength_ReadThrowsInvalidData(byte[] bytes)
    {
        InvalidDataException e = Assert.Throws<InvalidDataException>(() => Decode<int>(bytes));
        Assert.Contains("'int32'", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(new byte[0])]
    [InlineData(new byte[] { 2 })]
    [InlineData(new byte[] { 0, 0 })]
    public void Bool_Malformed_ReadThrowsInvalidData(byte[] bytes) =>
        Assert.Throws<InvalidDataException>(() => Decode<bool>(bytes));

    [Fact]
    public void Int64_Truncated_ReadThrowsInvalidData() =>
        Assert.Throws<InvalidDataException>(() => ValueCodec<long>.Get().Read(Chained([1, 2, 3, 4, 5, 6, 7], 2)));

    [Theory]
    [InlineData(new byte[0])]
    [InlineData(new byte[] { 7, (byte)'a' })]
    [InlineData(new byte[] { 0, (byte)'a' })]
    public void StringAndBytes_BadPresenceByte_ReadThrowsInvalidData(byte[] bytes)
    {
        Assert.Throws<InvalidDataException>(() => Decode<string>(bytes));
        Assert.Throws<InvalidDataException>(() => Decode<byte[]>(bytes));
    }

    [Fact]
    public void Read_TenThousandMutatedOrRandomBuffers_OnlyInvalidDataOrAValue()
    {
        Random random = new(20261123);
        List<Subject> subjects = Subjects();
        int rejected = 0;
        for (int i = 0; i < 10_000; i++)
        {
            Subject subject = subjects[i % subjects.Count];
            byte[] input = Mutate(subject.Valid, random);
            ReadOnlySequence<byte> sequence = random.Next(2) == 0 ? new(input) : Chained(input, random.Next(1, 5));
            try
            {
                _ = subject.Read(sequence);
            }
            catch (InvalidDataException)
            {
                rejected++;
            }
            catch (Exception e)
            {
                Assert.Fail($"{subject.Name} threw {e.GetType()} for [{Convert.ToHexString(input)}]: {e.Message}");
            }
        }

        // Most mutations must be caught; a fuzzer whose inputs all pass tests nothing.
        Assert.InRange(rejected, 3_000, 10_000);
    }

    private static byte[] Mutate(byte[] valid, Random random)
    {
        switch (random.Next(6))
        {
            case 0:
                byte[] noise = new byte[random.Next(0, 24)];
                random.NextBytes(noise);
                return noise;
            case 1:
                return valid[..random.Next(0, valid.Length)];
            case 2:
                byte[] longer = new byte[valid.Length + random.Next(1, 4)];
                valid.CopyTo(longer, 0);
                random.NextBytes(longer.AsSpan(valid.Length));
                return longer;
            default:
                byte[] flipped = (byte[])valid.Clone();
                for (int n = random.Next(1, 4); n > 0 && flipped.Length > 0; n--)
                {
                    flipped[random.Next(flipped.Length)] = (byte)random.Next(256);
                }

                return flipped;
        }
    }
}
