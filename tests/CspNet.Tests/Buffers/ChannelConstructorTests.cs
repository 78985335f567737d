using CspNet.Tests.Channels;

namespace CspNet.Tests.Buffers;

public class ChannelConstructorTests
{
    [Fact]
    public void One2OneChannel_NullBuffer_ThrowsArgumentNullException() =>
        AssertNullBuffer(() => new One2OneChannel<int>(null!));

    [Fact]
    public void Any2OneChannel_NullBuffer_ThrowsArgumentNullException() =>
        AssertNullBuffer(() => new Any2OneChannel<int>(null!));

    [Fact]
    public void One2AnyChannel_NullBuffer_ThrowsArgumentNullException() =>
        AssertNullBuffer(() => new One2AnyChannel<int>(null!));

    [Fact]
    public void Any2AnyChannel_NullBuffer_ThrowsArgumentNullException() =>
        AssertNullBuffer(() => new Any2AnyChannel<int>(null!));

    [Theory]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public void Factory_NullBuffer_ThrowsArgumentNullException(ChannelKind kind) =>
        AssertNullBuffer(() => kind switch
        {
            ChannelKind.One2One => Factory.GetOne2One<int>(null!),
            ChannelKind.Any2One => Factory.GetAny2One<int>(null!),
            ChannelKind.One2Any => Factory.GetOne2Any<int>(null!),
            _ => (CspChannel<int>)Factory.GetAny2Any<int>(null!),
        });

    [Theory]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public void Constructor_Buffer_IsNotPoisoned(ChannelKind kind) =>
        Assert.False(TestChannels.Create(kind, new FifoBuffer<int>(1)).IsPoisoned);

    private static void AssertNullBuffer(Func<object> create)
    {
        var exception = Assert.Throws<ArgumentNullException>(create);
        Assert.Equal("buffer", exception.ParamName);
        Assert.Contains("FifoBuffer", exception.Message, StringComparison.Ordinal);
    }
}
