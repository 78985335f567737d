namespace CspNet.Tests.Channels;

/// <summary><c>ReadAll</c> and <c>ReadAllAsync</c> deliver every value and end cleanly on poison.</summary>
public class ReadAllTests
{
    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAllAsync_WriterPoisonsAfterWriting_YieldsAllValuesThenEnds(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        var writer = ThreadParty.Start(() =>
        {
            for (int i = 0; i < 500; i++)
            {
                channel.Write(i);
            }

            channel.Poison();
        });

        var received = new List<int>();
        await foreach (int value in channel.ReadAllAsync())
        {
            received.Add(value);
        }

        await writer.Completion;
        Assert.Equal(Enumerable.Range(0, 500), received);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAll_WriterPoisonsAfterWriting_YieldsAllValuesThenEnds(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        var reader = ThreadParty.Start(() => channel.ReadAll().ToList());

        for (int i = 0; i < 500; i++)
        {
            await channel.WriteAsync(i);
        }

        channel.Poison();

        Assert.Equal(Enumerable.Range(0, 500), await reader.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAllAsync_BufferedValuesThenPoison_DrainsBufferThenEnds(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(10));
        for (int i = 0; i < 10; i++)
        {
            await channel.WriteAsync(i);
        }

        channel.Poison();

        var received = new List<int>();
        await foreach (int value in channel.ReadAllAsync())
        {
            received.Add(value);
        }

        Assert.Equal(Enumerable.Range(0, 10), received);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAll_BufferedValuesThenPoison_DrainsBufferThenEnds(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(10));
        for (int i = 0; i < 10; i++)
        {
            channel.Write(i);
        }

        channel.Poison();

        var reader = ThreadParty.Start(() => channel.ReadAll().ToList());
        Assert.Equal(Enumerable.Range(0, 10), await reader.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(TestChannels.AllKinds), MemberType = typeof(TestChannels))]
    public async Task ReadAllAsync_PoisonedWhileWaiting_EndsWithoutException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        var steps = new Steps();
        Task<int> reader = Task.Run(async () =>
        {
            int count = 0;
            await foreach (int value in channel.ReadAllAsync())
            {
                count++;
                steps.Reach(count);
            }

            return count;
        });

        await channel.WriteAsync(1);
        steps.WaitFor(1);
        channel.Poison();

        Assert.Equal(1, await reader);
    }

    [Fact(Timeout = 20_000)]
    public async Task ReadAllAsync_Cancelled_ThrowsAndTakesNothing()
    {
        var channel = new One2OneChannel<int>();
        using var cancellation = new CancellationTokenSource();
        await using IAsyncEnumerator<int> enumerator = channel.ReadAllAsync(cancellation.Token).GetAsyncEnumerator();
        Task<bool> next = enumerator.MoveNextAsync().AsTask();
        Assert.False(next.IsCompleted);

        await cancellation.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => next);
        Task write = channel.WriteAsync(1).AsTask();
        Assert.False(write.IsCompleted);
        Assert.Equal(1, await channel.ReadAsync());
        await write;
    }

    [Fact(Timeout = 20_000)]
    public async Task ReadAllAsync_TokenGivenToWithCancellation_IsHonoured()
    {
        var channel = new One2OneChannel<int>();
        using var cancellation = new CancellationTokenSource();
        Task<int> reader = Task.Run(async () =>
        {
            int count = 0;
            await foreach (int value in channel.ReadAllAsync().WithCancellation(cancellation.Token))
            {
                count++;
            }

            return count;
        });

        await channel.WriteAsync(1);
        await cancellation.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reader);
    }

    [Fact]
    public void ReadAll_NullInput_ThrowsArgumentNullExceptionAtOnce() =>
        Assert.Throws<ArgumentNullException>(() => ChannelInExtensions.ReadAll<int>(null!));

    [Fact]
    public void ReadAllAsync_NullInput_ThrowsArgumentNullExceptionAtOnce() =>
        Assert.Throws<ArgumentNullException>("input", () => ChannelInExtensions.ReadAllAsync<int>(null!));
}
