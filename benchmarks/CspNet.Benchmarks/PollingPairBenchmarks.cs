using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Jobs;
using CspNet.Alternation;
using Parallel = CspNet.Parallel;

namespace CspNet.Benchmarks;

/// <summary>
/// A polling pair on a <see cref="One2OneChannel{T}"/>: one process polls (a selection over the
/// channel and a <see cref="Skip"/>, taking the value when the channel is ready), the other
/// writes or reads plainly; <see cref="Messages"/> values per invocation, times per value. The
/// poller's operations complete at once, so it never parks: the benchmark shows whether the
/// partner it wakes waits for it (the async pair would then move a few hundred values a second,
/// rescued only by the hand-off watchdog's tick) or runs elsewhere at once. The thread pair is the
/// baseline; each variant runs once with the hand-off's next-run slots (job <c>Slots</c>) and once
/// with every continuation on the thread pool (job <c>Pool</c>, <c>CSPNET_HANDOFF=pool</c>).
/// Run with <c>dotnet run -c Release -- --filter '*PollingPair*'</c>.
/// </summary>
[Config(typeof(PollingPairConfig))]
public class PollingPairBenchmarks
{
    /// <summary>Values per benchmark invocation.</summary>
    public const int Messages = 2_000;

    private Parallel _threadPollingReader = null!;
    private Parallel _asyncPollingReader = null!;
    private Parallel _asyncPollingWriter = null!;

    [GlobalSetup]
    public void Setup()
    {
        var threads = new One2OneChannel<int>();
        _threadPollingReader = new Parallel();
        _threadPollingReader.AddProcess(() =>
        {
            for (int i = 0; i < Messages; i++)
            {
                threads.Write(i);
            }
        });
        _threadPollingReader.AddProcess(() =>
        {
            var alt = new Alternative(threads.In, new Skip());
            for (int received = 0; received < Messages;)
            {
                if (alt.PriSelect() == 0)
                {
                    Check(threads.Read(), received++);
                }
            }
        });

        var reading = new One2OneChannel<int>();
        _asyncPollingReader = new Parallel();
        _asyncPollingReader.AddProcess(async ct =>
        {
            for (int i = 0; i < Messages; i++)
            {
                await reading.WriteAsync(i, ct);
            }
        });
        _asyncPollingReader.AddProcess(async ct =>
        {
            var alt = new Alternative(reading.In, new Skip());
            for (int received = 0; received < Messages;)
            {
                if (await alt.PriSelectAsync(ct) == 0)
                {
                    Check(await reading.ReadAsync(ct), received++);
                }
            }
        });

        var writing = new One2OneChannel<int>();
        _asyncPollingWriter = new Parallel();
        _asyncPollingWriter.AddProcess(async ct =>
        {
            var alt = new Alternative(writing.Out, new Skip());
            for (int i = 0; i < Messages;)
            {
                writing.Out.Offer(i);
                if (await alt.PriSelectAsync(ct) == 0)
                {
                    i++;
                }
            }
        });
        _asyncPollingWriter.AddProcess(async ct =>
        {
            for (int i = 0; i < Messages; i++)
            {
                Check(await writing.ReadAsync(ct), i);
            }
        });
    }

    /// <summary>Two thread processes: the reader polls with <c>PriSelect</c>, then <c>Read</c>s.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Messages)]
    public Task ThreadPollingReader() => _threadPollingReader.RunAsync();

    /// <summary>Two async processes: the reader polls with <c>PriSelectAsync</c>, then <c>ReadAsync</c>s.</summary>
    [Benchmark(OperationsPerInvoke = Messages)]
    public Task AsyncPollingReader() => _asyncPollingReader.RunAsync();

    /// <summary>Two async processes: the writer polls an offered output guard with <c>PriSelectAsync</c>.</summary>
    [Benchmark(OperationsPerInvoke = Messages)]
    public Task AsyncPollingWriter() => _asyncPollingWriter.RunAsync();

    private static void Check(int actual, int expected)
    {
        if (actual != expected)
        {
            throw new InvalidOperationException($"Expected {expected}, got {actual}.");
        }
    }
}

/// <summary>The hand-off as shipped, and every continuation on the pool: one job each.</summary>
internal sealed class PollingPairConfig : ManualConfig
{
    public PollingPairConfig()
    {
        Job template = Job.Default.WithLaunchCount(1).WithWarmupCount(3).WithIterationCount(10);
        AddJob(template.WithId("Slots"));
        AddJob(template.WithEnvironmentVariables(new EnvironmentVariable("CSPNET_HANDOFF", "pool")).WithId("Pool"));
        AddDiagnoser(MemoryDiagnoser.Default);
    }
}
