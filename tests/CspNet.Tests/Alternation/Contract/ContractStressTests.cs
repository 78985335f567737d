using System.Diagnostics;
using Xunit.Abstractions;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation.Contract;

/// <summary>
/// Over a million items through remote ends (<see cref="DelayedChannelEnd{T}"/>, with random
/// latency, late and duplicated pushes, phantom competitors and cancelled reservations) and local
/// ends in the same alternatives, with selects and writes cancelled at random and a timer beside.
/// </summary>
public class ContractStressTests(ITestOutputHelper output)
{
    [Fact(Timeout = 120000)]
    public async Task Alternative_RemoteAndLocalEndsWithRandomCancels_EveryItemOnceInWriterOrder()
    {
        // CSPNET_CONTRACT_STRESS_ITEMS (per writer) and CSPNET_CONTRACT_STRESS_SEED override the size and seed.
        int items = int.TryParse(Environment.GetEnvironmentVariable("CSPNET_CONTRACT_STRESS_ITEMS"), out int i) ? i : 84_000;
        int seed = int.TryParse(Environment.GetEnvironmentVariable("CSPNET_CONTRACT_STRESS_SEED"), out int s) ? s : Environment.TickCount;
        output.WriteLine($"seed {seed}, {items} items per writer");
        var run = new ContractStressRun(items, seed);
        await run.RunAsync();
        output.WriteLine(run.ToString());
        run.Counter.AssertEachExactlyOnce();
        Assert.True(run.Counter.Total >= 1_000_000 || items < 84_000, "Fewer than a million items.");
        Assert.True(run.CancelledSelects > 0, "No select was cancelled.");
        Assert.True(run.CancelledWrites > 0, "No write was cancelled.");
        Assert.True(run.RemoteSelections > 0 && run.LocalSelections > 0, "Remote and local ends must both be chosen.");
    }
}

/// <summary>
/// One run. Sources: L0 local rendezvous, L1 local buffered (16); R0 remote rendezvous, R1 remote
/// buffered (8), both with random latency and phantom competitors; R2 remote buffered (4) without
/// latency; R3 remote buffered (32) with random latency whose ends learn readiness only when they
/// ask (late). Each source has two writers (a thread, and an async process whose writes are
/// cancelled at random and retried), each writing its own range in order.
/// </summary>
/// <remarks>
/// Readers: A, async, PriSelectAsync/FairSelectAsync over all six sources and a timer, its selects
/// cancelled at random by itself and by writers (racing with commits and reservations); B, a
/// thread, FairSelect over all six in another order; plain readers on R0 (async, competing at the
/// peer) and L0 (thread). Every reader checks that each writer's items reach it in order. When
/// every writer is done, every source is poisoned; alternating readers switch a poisoned end off.
/// </remarks>
internal sealed class ContractStressRun(int itemsPerWriter, int seed)
{
    private const int Sources = 6;
    private const int Writers = 2 * Sources;

    private readonly TestSource[] _sources =
    [
        TestSource.Local(AltKind.Any2Any),
        TestSource.Local(AltKind.Any2Any, 16),
        TestSource.Create(EndKind.RemoteLagging, 0, stealPerMille: 5),
        TestSource.Create(EndKind.RemoteLagging, 8, stealPerMille: 5),
        TestSource.Create(EndKind.Remote, 4),
        TestSource.LateReadiness(32),
    ];

    private CancellationTokenSource? _readerA;
    private int _writersLeft = Writers;
    private long _cancelledSelects;
    private long _cancelledWrites;
    private long _remoteSelections;
    private long _localSelections;
    private long _timeouts;
    private double _seconds;

    internal ItemCounter Counter { get; } = new(Writers * itemsPerWriter);

    internal long CancelledSelects => Interlocked.Read(ref _cancelledSelects);

    internal long CancelledWrites => Interlocked.Read(ref _cancelledWrites);

    internal long RemoteSelections => Interlocked.Read(ref _remoteSelections);

    internal long LocalSelections => Interlocked.Read(ref _localSelections);

    public override string ToString() =>
        $"seed {seed}: {Counter.Total:N0} items read, {LocalSelections:N0} local and {RemoteSelections:N0} remote selections, " +
        $"{Interlocked.Read(ref _timeouts):N0} timeouts, {CancelledSelects:N0} cancelled selects, {CancelledWrites:N0} cancelled writes, {_seconds:F1} s";

    internal async Task RunAsync()
    {
        long start = Stopwatch.GetTimestamp();
        var par = new Parallel();
        var processes = new FailFastProcesses(par, PoisonAll);
        for (int w = 0; w < Writers; w++)
        {
            int me = w;
            if (w % 2 == 0)
            {
                processes.AddThread(() => ThreadWriter(me));
            }
            else
            {
                processes.AddAsync(() => AsyncWriter(me));
            }
        }

        processes.AddAsync(ReaderA);
        processes.AddThread(ReaderB);
        processes.AddAsync(() => PlainReaderAsync(_sources[2].CreateEnd().In));
        processes.AddThread(() => PlainReader(_sources[0].CreateEnd().In));
        await par.RunAsync();
        _seconds = AltTime.MillisecondsSince(start) / 1000.0;
    }

    private void PoisonAll()
    {
        foreach (TestSource source in _sources)
        {
            source.Poison();
        }
    }

    private void WriterDone()
    {
        if (Interlocked.Decrement(ref _writersLeft) == 0)
        {
            PoisonAll();
        }
    }

    private void ThreadWriter(int writer)
    {
        var random = new Random(seed + writer);
        TestSource target = _sources[writer / 2];
        for (int v = writer * itemsPerWriter; v < (writer + 1) * itemsPerWriter; v++)
        {
            target.Write(v);
            if (random.Next(64) == 0)
            {
                Volatile.Read(ref _readerA)?.Cancel();
            }
        }

        WriterDone();
    }

    private async Task AsyncWriter(int writer)
    {
        var random = new Random(seed + writer);
        TestSource target = _sources[writer / 2];
        for (int v = writer * itemsPerWriter; v < (writer + 1) * itemsPerWriter; v++)
        {
            Interlocked.Add(ref _cancelledWrites, await RandomCancel.WriteAsync(ct => target.WriteAsync(v, ct), random, 8));
        }

        WriterDone();
    }

    private async Task ReaderA()
    {
        var random = new Random(seed + 100);
        InputEnd[] ends = [.. new[] { 2, 0, 3, 4, 1, 5 }.Select(i => _sources[i].CreateEnd())];
        var timer = new CSTimer();
        var alt = new Alternative([.. ends.Select(e => e.Guard), timer]);
        await AlternatingReader(ends, async (open, n) =>
        {
            // Not disposed: writers may cancel it at any time.
            var cts = new CancellationTokenSource();
            Volatile.Write(ref _readerA, cts);
            timer.RelativeTimeOut(5);
            ValueTask<int> select = n % 2 == 0 ? alt.PriSelectAsync([.. open, true], cts.Token) : alt.FairSelectAsync([.. open, true], cts.Token);
            if (!select.IsCompleted && random.Next(8) == 0)
            {
                await cts.CancelAsync();
            }

            try
            {
                return await select;
            }
            catch (OperationCanceledException)
            {
                Interlocked.Increment(ref _cancelledSelects);
                return -1;
            }
        });
    }

    private void ReaderB()
    {
        InputEnd[] ends = [.. new[] { 1, 3, 2, 5, 0, 4 }.Select(i => _sources[i].CreateEnd())];
        var alt = new Alternative([.. ends.Select(e => e.Guard)]);

        // Every select and read of a thread reader completes synchronously, so this runs on its thread.
        AlternatingReader(ends, (open, _) => new ValueTask<int>(alt.FairSelect(open))).GetAwaiter().GetResult();
    }

    /// <summary>Selects until every end is poisoned; <paramref name="select"/> answers -1 for a cancelled select and ends.Length for a timeout.</summary>
    private async Task AlternatingReader(InputEnd[] ends, Func<bool[], int, ValueTask<int>> select)
    {
        bool[] open = [.. ends.Select(_ => true)];
        int[] last = NewOrderCheck();
        long remote = 0;
        long local = 0;
        for (int n = 0; open.Any(o => o); n++)
        {
            int i = await select(open, n);
            if (i < 0)
            {
                continue;
            }

            if (i == ends.Length)
            {
                Interlocked.Increment(ref _timeouts);
                continue;
            }

            if (ends[i].Guard is DelayedChannelEnd<int>)
            {
                remote++;
            }
            else
            {
                local++;
            }

            ValueTask<int> read = ends[i].In.ReadAsync();
            if (!read.IsCompleted)
            {
                Counter.Violation($"After a select chose guard {i}, its ReadAsync did not complete at once.");
            }

            try
            {
                Take(await read, last);
            }
            catch (PoisonException)
            {
                open[i] = false;
            }
        }

        Interlocked.Add(ref _remoteSelections, remote);
        Interlocked.Add(ref _localSelections, local);
    }

    private async Task PlainReaderAsync(IChannelIn<int> end)
    {
        int[] last = NewOrderCheck();
        await foreach (int v in end.ReadAllAsync())
        {
            Take(v, last);
        }
    }

    private void PlainReader(IChannelIn<int> end)
    {
        int[] last = NewOrderCheck();
        foreach (int v in end.ReadAll())
        {
            Take(v, last);
        }
    }

    private static int[] NewOrderCheck() => [.. Enumerable.Repeat(-1, Writers)];

    /// <summary>Counts <paramref name="v"/> and checks that it comes after this reader's earlier items of the same writer.</summary>
    private void Take(int v, int[] last)
    {
        Counter.Count(v);
        int writer = v / itemsPerWriter;
        if (writer < Writers)
        {
            if (v <= last[writer])
            {
                Counter.Violation($"Writer {writer}'s item {v} came after its item {last[writer]}.");
            }

            last[writer] = v;
        }
    }
}
