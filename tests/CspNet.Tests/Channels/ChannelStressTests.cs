using CspNet.Stress;
using Xunit.Abstractions;

namespace CspNet.Tests.Channels;

/// <summary>The stress tests run alone, so they neither starve nor are starved by other tests.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ChannelStressGroup
{
    public const string Name = "Channel stress";
}

/// <summary>
/// A smaller version of the stress command (<c>benchmarks/CspNet.Stress</c>, 10,000,000 unbuffered
/// items per channel kind): pushes items through each channel kind with several writers and
/// readers (as the kind allows), each switching between blocking thread and async operations,
/// while async operations are cancelled at random. Every item must arrive exactly once, and each
/// reader must see each writer's items in order. See <see cref="StressRun"/>.
/// </summary>
/// <remarks>
/// Each kind runs three phases: a small FIFO buffer (writers and readers still park and are
/// cancelled whenever it is full or empty), a one-slot buffer, and a real unbuffered phase.
/// Unbuffered rendezvous between thread processes can cost a kernel wake-up per item on a loaded
/// two-core machine, so the sizes keep each kind to a few seconds in Debug. Randomness only moves
/// the timing; the assertions are exact.
/// </remarks>
[Collection(ChannelStressGroup.Name)]
public sealed class ChannelStressTests(ITestOutputHelper output)
{
    private const int TimeoutMilliseconds = 120_000;

    /// <summary>(buffer capacity, items): 0 means unbuffered.</summary>
    private static readonly (int Capacity, int Items)[] Phases =
    [
        (64, 2_000_000),
        (1, 300_000),
        (0, 1_000_000),
    ];

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task One2One_BufferedAndUnbufferedMixedPartiesRandomCancellation_EveryItemArrivesOnceInOrder() =>
        await RunKindAsync(ChannelKind.One2One);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task Any2One_BufferedAndUnbufferedMixedPartiesRandomCancellation_EveryItemArrivesOnceInOrder() =>
        await RunKindAsync(ChannelKind.Any2One);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task One2Any_BufferedAndUnbufferedMixedPartiesRandomCancellation_EveryItemArrivesOnceInOrder() =>
        await RunKindAsync(ChannelKind.One2Any);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task Any2Any_BufferedAndUnbufferedMixedPartiesRandomCancellation_EveryItemArrivesOnceInOrder() =>
        await RunKindAsync(ChannelKind.Any2Any);

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task RunAsync_FewItemsPerWriter_StillSwitchesModesAndCancels()
    {
        // The stress command accepts small --items: every party must still cancel something.
        using var run = new StressRun(TestChannels.Create<int>(ChannelKind.Any2Any), writers: 3, readers: 3, itemsPerWriter: 40, seed: 1);

        await run.RunAsync();

        Assert.Null(run.Failure());
        Assert.True(run.CancelledWrites > 0, run.Statistics);
    }

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task Failure_OneItemLostAndAnotherDuplicated_ReportsBoth()
    {
        using var run = new StressRun(TestChannels.Create<int>(ChannelKind.One2One), writers: 1, readers: 1, itemsPerWriter: 1000, seed: 2)
        {
            Tamper = value => value == 500 ? 501 : value,
        };

        await run.RunAsync();

        string? failure = run.Failure();
        Assert.NotNull(failure);
        Assert.Contains("1 items lost, 1 items duplicated", failure, StringComparison.Ordinal);
        Assert.Contains("item 500 arrived 0 times; item 501 arrived 2 times;", failure, StringComparison.Ordinal);
    }

    [Fact(Timeout = TimeoutMilliseconds)]
    public async Task Failure_TwoItemsOfAWriterSwapped_ReportsOrderViolation()
    {
        using var run = new StressRun(TestChannels.Create<int>(ChannelKind.Any2Any), writers: 3, readers: 1, itemsPerWriter: 1000, seed: 3)
        {
            Tamper = value => value switch { 1500 => 1501, 1501 => 1500, _ => value },
        };

        await run.RunAsync();

        string? failure = run.Failure();
        Assert.NotNull(failure);
        Assert.StartsWith("1 times a reader received a writer's item after a later one", failure, StringComparison.Ordinal);
    }

    private async Task RunKindAsync(ChannelKind kind)
    {
        int writers = TestChannels.SharedWriter(kind) ? 3 : 1;
        int readers = TestChannels.SharedReader(kind) ? 3 : 1;
        int seed = Environment.TickCount;
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
            Assert.Null(run.Failure());
        }
    }
}
