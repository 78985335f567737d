namespace CspNet.Tests.Channels;

/// <summary>The factory getters return the right kind, buffered or not.</summary>
public class FactoryTests
{
    [Fact]
    public void GetOne2One_NoBuffer_ReturnsUnbufferedOne2OneChannel() =>
        AssertUnbuffered(Assert.IsType<One2OneChannel<int>>(Factory.GetOne2One<int>()));

    [Fact]
    public void GetAny2One_NoBuffer_ReturnsUnbufferedAny2OneChannel() =>
        AssertUnbuffered(Assert.IsType<Any2OneChannel<int>>(Factory.GetAny2One<int>()));

    [Fact]
    public void GetOne2Any_NoBuffer_ReturnsUnbufferedOne2AnyChannel() =>
        AssertUnbuffered(Assert.IsType<One2AnyChannel<int>>(Factory.GetOne2Any<int>()));

    [Fact]
    public void GetAny2Any_NoBuffer_ReturnsUnbufferedAny2AnyChannel() =>
        AssertUnbuffered(Assert.IsType<Any2AnyChannel<int>>(Factory.GetAny2Any<int>()));

    [Fact]
    public void GetOne2One_Buffer_ReturnsOne2OneChannelUsingBuffer() =>
        AssertUsesBuffer(buffer => Assert.IsType<One2OneChannel<int>>(Factory.GetOne2One(buffer)));

    [Fact]
    public void GetAny2One_Buffer_ReturnsAny2OneChannelUsingBuffer() =>
        AssertUsesBuffer(buffer => Assert.IsType<Any2OneChannel<int>>(Factory.GetAny2One(buffer)));

    [Fact]
    public void GetOne2Any_Buffer_ReturnsOne2AnyChannelUsingBuffer() =>
        AssertUsesBuffer(buffer => Assert.IsType<One2AnyChannel<int>>(Factory.GetOne2Any(buffer)));

    [Fact]
    public void GetAny2Any_Buffer_ReturnsAny2AnyChannelUsingBuffer() =>
        AssertUsesBuffer(buffer => Assert.IsType<Any2AnyChannel<int>>(Factory.GetAny2Any(buffer)));

    [Fact]
    public void GetOne2One_TwoCalls_ReturnsDistinctChannels() =>
        Assert.NotSame(Factory.GetOne2One<int>(), Factory.GetOne2One<int>());

    [Fact(Timeout = 20_000)]
    public async Task GetOne2One_TwoReadersOrTwoWriters_RejectsBoth() =>
        await AssertEnds(Factory.GetOne2One<int>, sharedReader: false, sharedWriter: false);

    [Fact(Timeout = 20_000)]
    public async Task GetAny2One_TwoReadersOrTwoWriters_AcceptsWritersOnly() =>
        await AssertEnds(Factory.GetAny2One<int>, sharedReader: false, sharedWriter: true);

    [Fact(Timeout = 20_000)]
    public async Task GetOne2Any_TwoReadersOrTwoWriters_AcceptsReadersOnly() =>
        await AssertEnds(Factory.GetOne2Any<int>, sharedReader: true, sharedWriter: false);

    [Fact(Timeout = 20_000)]
    public async Task GetAny2Any_TwoReadersOrTwoWriters_AcceptsBoth() =>
        await AssertEnds(Factory.GetAny2Any<int>, sharedReader: true, sharedWriter: true);

    /// <summary>The kinds differ in which ends may be shared, not only in type.</summary>
    private static async Task AssertEnds(Func<CspChannel<int>> create, bool sharedReader, bool sharedWriter)
    {
        CspChannel<int> readers = create();
        Task<int> firstRead = readers.ReadAsync().AsTask();
        Task<int> secondRead = readers.ReadAsync().AsTask();
        if (sharedReader)
        {
            Assert.False(secondRead.IsCompleted);
        }
        else
        {
            await Assert.ThrowsAsync<InvalidOperationException>(() => secondRead);
        }

        readers.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => firstRead);

        CspChannel<int> writers = create();
        Task firstWrite = writers.WriteAsync(1).AsTask();
        Task secondWrite = writers.WriteAsync(2).AsTask();
        if (sharedWriter)
        {
            Assert.False(secondWrite.IsCompleted);
        }
        else
        {
            await Assert.ThrowsAsync<InvalidOperationException>(() => secondWrite);
        }

        writers.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => firstWrite);
    }

    private static void AssertUnbuffered(CspChannel<int> channel)
    {
        Assert.False(channel.IsPoisoned);
        Task write = channel.WriteAsync(1).AsTask();
        Assert.False(write.IsCompleted);
        channel.Poison();
    }

    private static void AssertUsesBuffer(Func<IBuffer<int>, CspChannel<int>> create)
    {
        var buffer = new FifoBuffer<int>(2);
        CspChannel<int> channel = create(buffer);

        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(1)));
        Assert.Equal(1, buffer.Count);
        Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(2)));
        Assert.True(buffer.IsFull);
        Task third = channel.WriteAsync(3).AsTask();
        Assert.False(third.IsCompleted);
        channel.Poison();
    }
}
