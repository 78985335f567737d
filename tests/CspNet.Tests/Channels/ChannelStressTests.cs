using Xunit.Abstractions;

namespace CspNet.Tests.Channels;

/// <summary>The stress tests run alone, so they neither starve nor are starved by other tests.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ChannelStressGroup
{
    public const string Name = "Channel stress";
}

/// <summary>
/// Pushes more than 10,000,000 items through each channel kind with several writers and readers
/// (as the kind allows), each switching between blocking thread and async operations, while async
/// operations are cancelled at random. Every item must arrive exactly once. See <see cref="StressRun"/>.
/// </summary>
/// <remarks>
/// Unbuffered rendezvous between thread processes costs a kernel wake-up per item on a loaded
/// two-core machine, so most items go through a small FIFO buffer (writers and readers still park
/// and are cancelled whenever it is full or empty), a part through a one-slot buffer, and a part
/// through the unbuffered channel. Randomness only moves the timing; the assertions are exact.
/// </remarks>
[Collection(ChannelStressGroup.Name)]
public sealed class ChannelStressTests(ITestOutputHelper output)
{
    private const int TimeoutMilliseconds = 120_000;

    /// <summary>(buffer capacity, items): 0 means unbuffered. The items add up to 10,000,000 per kind.</summary>
    private static readonly (int Capacity, int Items)[] Phases =
    [
        (64, 9_000_000),
        (1, 500_000),
        (0, 500_000),
    ];

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task One2One_TenMillionItemsMixedPartiesRandomCancellation_EveryItemArrivesOnce() =>
        await RunKindAsync(ChannelKind.One2One);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task Any2One_TenMillionItemsMixedPartiesRandomCancellation_EveryItemArrivesOnce() =>
        await RunKindAsync(ChannelKind.Any2One);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task One2Any_TenMillionItemsMixedPartiesRandomCancellation_EveryItemArrivesOnce() =>
        await RunKindAsync(ChannelKind.One2Any);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task Any2Any_TenMillionItemsMixedPartiesRandomCancellation_EveryItemArrivesOnce() =>
        await RunKindAsync(ChannelKind.Any2Any);

    private async Task RunKindAsync(ChannelKind kind)
    {
        int writers = TestChannels.SharedWriter(kind) ? 3 : 1;
        int readers = TestChannels.SharedReader(kind) ? 3 : 1;
        int seed = Environment.TickCount;
        long total = 0;
        foreach ((int capacity, int items) in Phases)
        {
            CspChannel<int> channel = capacity == 0
                ? TestChannels.Create<int>(kind)
                : TestChannels.Create(kind, new FifoBuffer<int>(capacity));
            int itemsPerWriter = (items + writers - 1) / writers;
            using var run = new StressRun(channel, writers, readers, itemsPerWriter, seed + capacity);

            TimeSpan elapsed = await run.RunAsync();

            output.WriteLine($"{kind} {(capacity == 0 ? "unbuffered" : $"FifoBuffer({capacity})")}, {writers} writers x {readers} readers: " +
                $"{elapsed.TotalSeconds:F2} s, {run.TotalItems / elapsed.TotalSeconds / 1e6:F2} M items/s; {run.Statistics}");
            run.Verify();
            total += run.TotalItems;
        }

        Assert.True(total >= 10_000_000, $"Only {total:N0} items went through the {kind} channels.");
    }
}
