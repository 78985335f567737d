using CspNet.Alternation;

namespace CspNet.Tests.Channels;

/// <summary>
/// A One end belongs to one process. A second process parked beside the first is a program
/// error and gets <see cref="InvalidOperationException"/> (not <see cref="PoisonException"/>);
/// the first party is not disturbed. Any ends accept several parties.
/// </summary>
public class OneEndMisuseTests
{
    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.Any2One)]
    public async Task ReadAsync_SecondReaderOnOneReadingEnd_ThrowsInvalidOperationException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task<int> first = channel.ReadAsync().AsTask();
        Assert.False(first.IsCompleted);

        var exception = await Assert.ThrowsAsync<InvalidOperationException>(() => channel.ReadAsync().AsTask());

        Assert.Contains("reading", exception.Message, StringComparison.Ordinal);
        Assert.Contains(kind + "Channel", exception.Message, StringComparison.Ordinal);
        Assert.Contains("One2AnyChannel", exception.Message, StringComparison.Ordinal);
        await channel.WriteAsync(1);
        Assert.Equal(1, await first);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.Any2One)]
    public async Task ReadAsync_SecondReaderOnOneReadingEnd_MessageSuggestsOnlyKindsWithSharedReadingEnd(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task<int> first = channel.ReadAsync().AsTask();

        var exception = await Assert.ThrowsAsync<InvalidOperationException>(() => channel.ReadAsync().AsTask());

        // The advice after "Use" must name only kinds whose reading end may be shared:
        // One2AnyChannel and Any2AnyChannel. Any2OneChannel has a single reading end too.
        string advice = exception.Message[exception.Message.IndexOf("Use ", StringComparison.Ordinal)..];
        Assert.Contains("One2AnyChannel", advice, StringComparison.Ordinal);
        Assert.Contains("Any2AnyChannel", advice, StringComparison.Ordinal);
        Assert.DoesNotContain("Any2OneChannel", advice, StringComparison.Ordinal);
        channel.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => first);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.One2Any)]
    public async Task WriteAsync_SecondWriterOnOneWritingEnd_MessageSuggestsOnlyKindsWithSharedWritingEnd(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task first = channel.WriteAsync(1).AsTask();

        var exception = await Assert.ThrowsAsync<InvalidOperationException>(() => channel.WriteAsync(2).AsTask());

        string advice = exception.Message[exception.Message.IndexOf("Use ", StringComparison.Ordinal)..];
        Assert.Contains("Any2OneChannel", advice, StringComparison.Ordinal);
        Assert.Contains("Any2AnyChannel", advice, StringComparison.Ordinal);
        Assert.DoesNotContain("One2AnyChannel", advice, StringComparison.Ordinal);
        channel.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => first);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.Any2One)]
    public async Task ReadAsync_SecondReaderWithCancellableTokenOnOneReadingEnd_ThrowsInvalidOperationException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task<int> first = channel.ReadAsync(cancellation.Token).AsTask();

        await Assert.ThrowsAsync<InvalidOperationException>(() => channel.ReadAsync(cancellation.Token).AsTask());

        Assert.False(first.IsCompleted);
        await channel.WriteAsync(1);
        Assert.Equal(1, await first);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.Any2One)]
    public async Task Read_ThreadReaderBesideParkedReaderOnOneReadingEnd_ThrowsInvalidOperationException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task<int> first = channel.ReadAsync().AsTask();

        var second = ThreadParty.Start(channel.Read);

        await Assert.ThrowsAsync<InvalidOperationException>(() => second.Completion);
        await channel.WriteAsync(1);
        Assert.Equal(1, await first);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.One2Any)]
    public async Task WriteAsync_SecondWriterOnOneWritingEnd_ThrowsInvalidOperationException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task first = channel.WriteAsync(1).AsTask();
        Assert.False(first.IsCompleted);

        var exception = await Assert.ThrowsAsync<InvalidOperationException>(() => channel.WriteAsync(2).AsTask());

        Assert.Contains("writing", exception.Message, StringComparison.Ordinal);
        Assert.Contains(kind + "Channel", exception.Message, StringComparison.Ordinal);
        Assert.Contains("Any2OneChannel", exception.Message, StringComparison.Ordinal);
        Assert.Equal(1, await channel.ReadAsync());
        await first;
        await TestChannels.AssertNothingToReadAsync(channel);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.One2Any)]
    public async Task WriteAsync_SecondWriterWithCancellableTokenOnOneWritingEnd_ThrowsInvalidOperationException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        using var cancellation = new CancellationTokenSource();
        Task first = channel.WriteAsync(1, cancellation.Token).AsTask();

        await Assert.ThrowsAsync<InvalidOperationException>(() => channel.WriteAsync(2, cancellation.Token).AsTask());

        Assert.Equal(1, await channel.ReadAsync());
        await first;
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.One2Any)]
    public async Task Write_ThreadWriterBesideParkedWriterOnOneWritingEnd_ThrowsInvalidOperationException(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task first = channel.WriteAsync(1).AsTask();

        var second = ThreadParty.Start(() => channel.Write(2));

        await Assert.ThrowsAsync<InvalidOperationException>(() => second.Completion);
        Assert.Equal(1, await channel.ReadAsync());
        await first;
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.One2Any)]
    public async Task WriteAsync_SecondWriterOnFullBufferOfOneWritingEnd_ThrowsInvalidOperationException(ChannelKind kind)
    {
        var channel = TestChannels.Create(kind, new FifoBuffer<int>(1));
        await channel.WriteAsync(1);
        Task first = channel.WriteAsync(2).AsTask();

        await Assert.ThrowsAsync<InvalidOperationException>(() => channel.WriteAsync(3).AsTask());

        Assert.Equal(1, await channel.ReadAsync());
        Assert.Equal(2, await channel.ReadAsync());
        await first;
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2Any)]
    [InlineData(ChannelKind.Any2Any)]
    public async Task ReadAsync_SecondReaderOnSharedReadingEnd_BothWaitAndBothGetAValue(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task<int> first = channel.ReadAsync().AsTask();
        Task<int> second = channel.ReadAsync().AsTask();
        Assert.False(first.IsCompleted);
        Assert.False(second.IsCompleted);

        await channel.WriteAsync(1);
        await channel.WriteAsync(2);

        Assert.Equal([1, 2], (await Task.WhenAll(first, second)).Order());
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.Any2One)]
    [InlineData(ChannelKind.Any2Any)]
    public async Task WriteAsync_SecondWriterOnSharedWritingEnd_BothWaitAndBothAreRead(ChannelKind kind)
    {
        var channel = TestChannels.Create<int>(kind);
        Task first = channel.WriteAsync(1).AsTask();
        Task second = channel.WriteAsync(2).AsTask();
        Assert.False(first.IsCompleted);
        Assert.False(second.IsCompleted);

        int[] values = [await channel.ReadAsync(), await channel.ReadAsync()];

        Assert.Equal([1, 2], values.Order());
        await Task.WhenAll(first, second);
    }

    [Theory(Timeout = 20_000)]
    [InlineData(ChannelKind.One2One)]
    [InlineData(ChannelKind.Any2One)]
    public async Task ReadAsync_SequentialReadsByThreadThenAsyncOnOneEnd_AreNotMisuse(ChannelKind kind)
    {
        // One process may switch between blocking and async reads: only overlapping reads are misuse.
        var channel = TestChannels.Create<int>(kind);
        var writer = Task.Run(async () =>
        {
            for (int i = 0; i < 100; i++)
            {
                await channel.WriteAsync(i);
            }
        });

        for (int i = 0; i < 100; i += 2)
        {
            int value = i;
            var reader = ThreadParty.Start(channel.Read);
            Assert.Equal(value, await reader.Completion);
            Assert.Equal(value + 1, await channel.ReadAsync());
        }

        await writer;
    }

    [Fact(Timeout = 60_000)]
    public async Task PriSelectThenRead_TwoThreadsOnOneReadingEnd_EveryValueReadOnceRefusalsTakeNothing()
    {
        // Misuse: two threads select over, and read from, the same reading end of a One2One. The
        // library refuses what it can see (a second selection or reader at once); whatever it
        // refuses must take nothing, and every value written is read exactly once by someone.
        const int Values = 20_000;
        var channel = new One2OneChannel<int>();
        var readers = new ThreadParty<(List<int> Values, int Refusals)>[2];
        for (int r = 0; r < readers.Length; r++)
        {
            readers[r] = ThreadParty.Start(() =>
            {
                var alt = new Alternative(channel.In);
                var got = new List<int>();
                int refusals = 0;
                while (true)
                {
                    try
                    {
                        alt.PriSelect();
                        got.Add(channel.Read());
                    }
                    catch (PoisonException)
                    {
                        return (got, refusals);
                    }
                    catch (InvalidOperationException)
                    {
                        refusals++;
                    }
                }
            });
        }

        for (int i = 0; i < Values; i++)
        {
            await channel.WriteAsync(i);
        }

        channel.Poison();
        (List<int> Values, int Refusals)[] results = await Task.WhenAll(readers.Select(r => r.Completion));

        int[] all = [.. results.SelectMany(r => r.Values).Order()];
        int refused = results.Sum(r => r.Refusals);
        Assert.True(
            all.SequenceEqual(Enumerable.Range(0, Values)),
            $"{all.Length} values read for {Values} written ({all.Distinct().Count()} distinct) after {refused} refusals.");
    }
}
