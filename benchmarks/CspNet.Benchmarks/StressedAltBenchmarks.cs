using System.Globalization;
using BenchmarkDotNet.Attributes;
using Parallel = CspNet.Parallel;

namespace CspNet.Benchmarks;

/// <summary>
/// JCSP's StressedAlt: <c>k</c> writer processes each write continuously to their own unbuffered
/// <see cref="One2OneChannel{T}"/>; one reader <see cref="Alternative.FairSelect()"/>s over the
/// <c>k</c> input ends and reads the chosen one. <see cref="Selections"/> selections per
/// invocation; times are per selection (<c>OperationsPerInvoke</c>) and <c>Op/s</c> is selections
/// per second.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="Case"/> gives the writers' kind and number. <c>Thread/k</c>: <c>k</c> thread
/// processes (a <see cref="Parallel"/> on <see cref="CSPThreadPool.Default"/>) using blocking
/// <c>Write</c>; the reader is the benchmark thread, using blocking <c>FairSelect</c> and
/// <c>Read</c>. <c>Async/k</c>: <c>k</c> async processes using <c>WriteAsync</c>; the reader is an
/// async loop using <c>FairSelectAsync</c> and <c>ReadAsync</c>.
/// </para>
/// <para>
/// The writers start once, in the global setup, and run until the global cleanup poisons their
/// channels (each writer then catches <see cref="PoisonException"/> and ends, and the cleanup
/// waits for all of them). Between invocations they are parked in their writes, costing nothing.
/// </para>
/// <para>
/// Baseline (same class, same <see cref="Case"/>): the <c>k</c> writers share one unbuffered
/// <see cref="Any2OneChannel{T}"/> and the reader reads the same number of items from it with no
/// alternation. Each method has its own global setup, so a process runs only its own writers.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[OperationsPerSecond]
[MedianColumn]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 8)]
public class StressedAltBenchmarks
{
    /// <summary>Selections (baseline: reads) per benchmark invocation.</summary>
    public const int Selections = 10_000;

    private One2OneChannel<int>[] _channels = [];
    private AltingChannelIn<int>[] _inputs = [];
    private Alternative _alt = null!;
    private Any2OneChannel<int>? _shared;
    private Task _writers = Task.CompletedTask;

    /// <summary>Writer kind and count.</summary>
    [ParamsSource(nameof(Cases))]
    public StressedAltCase Case { get; set; } = null!;

    /// <summary>Thread writers: k = 10, 100; async writers: k = 10, 100, 1000.</summary>
    public static IEnumerable<StressedAltCase> Cases() =>
    [
        new(async: false, 10),
        new(async: false, 100),
        new(async: true, 10),
        new(async: true, 100),
        new(async: true, 1000),
    ];

    [GlobalSetup(Target = nameof(FairSelectRead))]
    public void SetupAlt()
    {
        int k = Case.Writers;
        _channels = new One2OneChannel<int>[k];
        _inputs = new AltingChannelIn<int>[k];
        var writers = new Parallel();
        for (int i = 0; i < k; i++)
        {
            var channel = new One2OneChannel<int>();
            _channels[i] = channel;
            _inputs[i] = channel.In;
            AddWriter(writers, channel.Out);
        }

        _alt = new Alternative(_inputs);
        _writers = writers.RunAsync();
    }

    [GlobalSetup(Target = nameof(Any2OneRead))]
    public void SetupShared()
    {
        var shared = new Any2OneChannel<int>();
        _shared = shared;
        var writers = new Parallel();
        for (int i = 0; i < Case.Writers; i++)
        {
            AddWriter(writers, shared.CreateOut());
        }

        _writers = writers.RunAsync();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        foreach (One2OneChannel<int> channel in _channels)
        {
            channel.Poison();
        }

        _shared?.Poison();
        if (!_writers.Wait(TimeSpan.FromSeconds(60)))
        {
            Console.WriteLine("// StressedAltBenchmarks: writers did not end within 60 s of poisoning their channels.");
        }
    }

    /// <summary>Baseline: read from one Any2One channel shared by the k writers; no alternation.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Selections)]
    public Task<long> Any2OneRead() => Case.Async ? ReadSharedAsync(_shared!) : Task.FromResult(ReadShared(_shared!));

    /// <summary>FairSelect over the k One2One input ends, then Read the chosen one.</summary>
    [Benchmark(OperationsPerInvoke = Selections)]
    public Task<long> FairSelectRead() => Case.Async ? SelectReadAsync(_alt, _inputs) : Task.FromResult(SelectRead(_alt, _inputs));

    private void AddWriter(Parallel writers, IChannelOut<int> output)
    {
        if (Case.Async)
        {
            writers.AddProcess(_ => WriteForeverAsync(output));
        }
        else
        {
            writers.AddProcess(() => WriteForever(output));
        }
    }

    private static void WriteForever(IChannelOut<int> output)
    {
        try
        {
            for (int i = 0; ; i++)
            {
                output.Write(i);
            }
        }
        catch (PoisonException)
        {
            // The global cleanup poisoned the channel: end.
        }
    }

    private static async Task WriteForeverAsync(IChannelOut<int> output)
    {
        try
        {
            for (int i = 0; ; i++)
            {
                await output.WriteAsync(i);
            }
        }
        catch (PoisonException)
        {
            // The global cleanup poisoned the channel: end.
        }
    }

    private static long SelectRead(Alternative alt, AltingChannelIn<int>[] inputs)
    {
        long sum = 0;
        for (int n = 0; n < Selections; n++)
        {
            sum += inputs[alt.FairSelect()].Read();
        }

        return sum;
    }

    private static async Task<long> SelectReadAsync(Alternative alt, AltingChannelIn<int>[] inputs)
    {
        long sum = 0;
        for (int n = 0; n < Selections; n++)
        {
            int chosen = await alt.FairSelectAsync();
            sum += await inputs[chosen].ReadAsync();
        }

        return sum;
    }

    private static long ReadShared(Any2OneChannel<int> shared)
    {
        long sum = 0;
        for (int n = 0; n < Selections; n++)
        {
            sum += shared.Read();
        }

        return sum;
    }

    private static async Task<long> ReadSharedAsync(Any2OneChannel<int> shared)
    {
        long sum = 0;
        for (int n = 0; n < Selections; n++)
        {
            sum += await shared.ReadAsync();
        }

        return sum;
    }
}

/// <summary>A <see cref="StressedAltBenchmarks"/> case: the writers' kind and number.</summary>
public sealed class StressedAltCase(bool async, int writers)
{
    /// <summary>Async processes (true) or thread processes (false).</summary>
    public bool Async { get; } = async;

    /// <summary>Number of writer processes, k.</summary>
    public int Writers { get; } = writers;

    /// <summary>Shown in the Case column: <c>Thread/k</c> or <c>Async/k</c>.</summary>
    /// <returns>The text.</returns>
    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"{(Async ? "Async" : "Thread")}/{Writers}");
}
