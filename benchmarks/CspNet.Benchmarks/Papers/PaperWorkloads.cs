using System.Diagnostics;
using System.Threading.Channels;

// The workloads of the papers' tables, shared by the BenchmarkDotNet classes in this folder and by
// the console harness benchmarks/CspNet.PaperTables (which links this file). Inside namespace
// CspNet.*, `Parallel` and `Barrier` resolve to CspNet's types before the implicit
// System.Threading(.Tasks) usings, so no alias is needed.
namespace CspNet.Benchmarks.Papers;

/// <summary>The four anonymous channel kinds of CSP.NET's Table 1.</summary>
public enum ChannelKind
{
    /// <summary><see cref="One2OneChannel{T}"/>.</summary>
    One2One,

    /// <summary><see cref="Any2OneChannel{T}"/>.</summary>
    Any2One,

    /// <summary><see cref="One2AnyChannel{T}"/>.</summary>
    One2Any,

    /// <summary><see cref="Any2AnyChannel{T}"/>.</summary>
    Any2Any,
}

/// <summary>Creates unbuffered channels of a given kind.</summary>
internal static class PaperChannels
{
    internal static CspChannel<int> Create(ChannelKind kind) => kind switch
    {
        ChannelKind.One2One => new One2OneChannel<int>(),
        ChannelKind.Any2One => new Any2OneChannel<int>(),
        ChannelKind.One2Any => new One2AnyChannel<int>(),
        ChannelKind.Any2Any => new Any2AnyChannel<int>(),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "Unknown channel kind."),
    };

    /// <summary>A System.Threading.Channels rendezvous channel (capacity 0 is a RendezvousChannel on .NET 10).</summary>
    internal static Channel<int> CreateRendezvous() =>
        Channel.CreateBounded<int>(new BoundedChannelOptions(0) { SingleReader = true, SingleWriter = true });

    internal static void Check(int actual, int expected, string what)
    {
        if (actual != expected)
        {
            throw new InvalidOperationException($"{what} out of step: expected {expected}, got {actual}.");
        }
    }
}

/// <summary>
/// CSP.NET section 4.1, Table 1: process A sends an integer to B, B passes it to C, C sends it back
/// to A; A sends the next integer only when the previous one has come back. Three unbuffered
/// channels of one kind. <see cref="Count"/> integers per run; each integer is three
/// communications.
/// </summary>
internal sealed class Ring
{
    private readonly CspChannel<int> _ab;
    private readonly CspChannel<int> _bc;
    private readonly CspChannel<int> _ca;
    private readonly Channel<int> _stcAb = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcBc = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcCa = PaperChannels.CreateRendezvous();

    internal Ring(ChannelKind kind)
    {
        _ab = PaperChannels.Create(kind);
        _bc = PaperChannels.Create(kind);
        _ca = PaperChannels.Create(kind);

        Threads = new Parallel();
        Threads.AddProcess(() => A(Count));
        Threads.AddProcess(() => Pass(_ab, _bc, Count));
        Threads.AddProcess(() => Pass(_bc, _ca, Count));

        Async = new Parallel();
        Async.AddProcess(_ => AAsync(Count));
        Async.AddProcess(_ => PassAsync(_ab, _bc, Count));
        Async.AddProcess(_ => PassAsync(_bc, _ca, Count));

        Stc = new Parallel();
        Stc.AddProcess(_ => StcAAsync(Count));
        Stc.AddProcess(_ => StcPassAsync(_stcAb, _stcBc, Count));
        Stc.AddProcess(_ => StcPassAsync(_stcBc, _stcCa, Count));
    }

    /// <summary>Integers sent around the ring per run; read by the processes when a run starts.</summary>
    internal int Count { get; set; } = 500_000;

    /// <summary>A, B and C as thread processes (blocking Read/Write) on CSPThreadPool.Default.</summary>
    internal Parallel Threads { get; }

    /// <summary>A, B and C as async processes (ReadAsync/WriteAsync).</summary>
    internal Parallel Async { get; }

    /// <summary>Baseline: the same ring over System.Threading.Channels rendezvous channels, async loops.</summary>
    internal Parallel Stc { get; }

    private void A(int count)
    {
        for (int i = 0; i < count; i++)
        {
            _ab.Write(i);
            PaperChannels.Check(_ca.Read(), i, "Ring");
        }
    }

    private static void Pass(CspChannel<int> input, CspChannel<int> output, int count)
    {
        for (int i = 0; i < count; i++)
        {
            output.Write(input.Read());
        }
    }

    private async Task AAsync(int count)
    {
        for (int i = 0; i < count; i++)
        {
            await _ab.WriteAsync(i);
            PaperChannels.Check(await _ca.ReadAsync(), i, "Ring");
        }
    }

    private static async Task PassAsync(CspChannel<int> input, CspChannel<int> output, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await output.WriteAsync(await input.ReadAsync());
        }
    }

    private async Task StcAAsync(int count)
    {
        for (int i = 0; i < count; i++)
        {
            await _stcAb.Writer.WriteAsync(i);
            PaperChannels.Check(await _stcCa.Reader.ReadAsync(), i, "Ring");
        }
    }

    private static async Task StcPassAsync(Channel<int> input, Channel<int> output, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await output.Writer.WriteAsync(await input.Reader.ReadAsync());
        }
    }
}

/// <summary>
/// CommsTime (JVMCSP Table 2): Prefix(0) -> Delta -> Successor -> Prefix, and Delta -> Consumer.
/// Per iteration four communications (prefix->delta, delta->successor, delta->consumer,
/// successor->prefix). Delta outputs sequentially (successor first, then consumer), the common
/// "SeqDelta" form. Every process runs <see cref="Iterations"/> cycles, so a run ends by itself.
/// </summary>
internal sealed class CommsTime
{
    /// <summary>Communications per iteration.</summary>
    internal const int CommunicationsPerIteration = 4;

    private readonly One2OneChannel<int> _a = new(); // prefix -> delta
    private readonly One2OneChannel<int> _b = new(); // delta -> successor
    private readonly One2OneChannel<int> _c = new(); // successor -> prefix
    private readonly One2OneChannel<int> _d = new(); // delta -> consumer
    private readonly Channel<int> _stcA = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcB = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcC = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcD = PaperChannels.CreateRendezvous();

    internal CommsTime()
    {
        Threads = new Parallel();
        Threads.AddProcess(() => Prefix(Iterations));
        Threads.AddProcess(() => Delta(Iterations));
        Threads.AddProcess(() => Successor(Iterations));
        Threads.AddProcess(() => Consumer(Iterations));

        Async = new Parallel();
        Async.AddProcess(_ => PrefixAsync(Iterations));
        Async.AddProcess(_ => DeltaAsync(Iterations));
        Async.AddProcess(_ => SuccessorAsync(Iterations));
        Async.AddProcess(_ => ConsumerAsync(Iterations));

        Stc = new Parallel();
        Stc.AddProcess(_ => StcPrefixAsync(Iterations));
        Stc.AddProcess(_ => StcDeltaAsync(Iterations));
        Stc.AddProcess(_ => StcSuccessorAsync(Iterations));
        Stc.AddProcess(_ => StcConsumerAsync(Iterations));
    }

    /// <summary>Cycles per run; read by the processes when a run starts.</summary>
    internal int Iterations { get; set; } = 100_000;

    internal Parallel Threads { get; }

    internal Parallel Async { get; }

    /// <summary>Baseline: the same network over System.Threading.Channels rendezvous channels.</summary>
    internal Parallel Stc { get; }

    private void Prefix(int n)
    {
        _a.Write(0);
        for (int i = 1; i < n; i++)
        {
            _a.Write(_c.Read());
        }

        _ = _c.Read();
    }

    private void Delta(int n)
    {
        for (int i = 0; i < n; i++)
        {
            int x = _a.Read();
            _b.Write(x);
            _d.Write(x);
        }
    }

    private void Successor(int n)
    {
        for (int i = 0; i < n; i++)
        {
            _c.Write(_b.Read() + 1);
        }
    }

    private void Consumer(int n)
    {
        for (int i = 0; i < n; i++)
        {
            PaperChannels.Check(_d.Read(), i, "CommsTime");
        }
    }

    private async Task PrefixAsync(int n)
    {
        await _a.WriteAsync(0);
        for (int i = 1; i < n; i++)
        {
            await _a.WriteAsync(await _c.ReadAsync());
        }

        _ = await _c.ReadAsync();
    }

    private async Task DeltaAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            int x = await _a.ReadAsync();
            await _b.WriteAsync(x);
            await _d.WriteAsync(x);
        }
    }

    private async Task SuccessorAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            await _c.WriteAsync(await _b.ReadAsync() + 1);
        }
    }

    private async Task ConsumerAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            PaperChannels.Check(await _d.ReadAsync(), i, "CommsTime");
        }
    }

    private async Task StcPrefixAsync(int n)
    {
        await _stcA.Writer.WriteAsync(0);
        for (int i = 1; i < n; i++)
        {
            await _stcA.Writer.WriteAsync(await _stcC.Reader.ReadAsync());
        }

        _ = await _stcC.Reader.ReadAsync();
    }

    private async Task StcDeltaAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            int x = await _stcA.Reader.ReadAsync();
            await _stcB.Writer.WriteAsync(x);
            await _stcD.Writer.WriteAsync(x);
        }
    }

    private async Task StcSuccessorAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            await _stcC.Writer.WriteAsync(await _stcB.Reader.ReadAsync() + 1);
        }
    }

    private async Task StcConsumerAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            PaperChannels.Check(await _stcD.Reader.ReadAsync(), i, "CommsTime");
        }
    }
}

/// <summary>
/// One Monte Carlo Pi worker (CSP.NET listing 8): <see cref="Iterations"/> random points with its
/// own seeded <see cref="Random"/>. Usable as a thread process and as an async process (the async
/// form computes without awaiting: Parallel starts it on the .NET thread pool).
/// </summary>
internal sealed class MonteCarloWorker(long iterations, int seed) : ICSPProcess, IAsyncCSPProcess
{
    internal long Iterations { get; set; } = iterations;

    internal long Hits { get; private set; }

    public void Run() => Hits = MonteCarlo.CountHits(Iterations, seed);

    public Task RunAsync(CancellationToken cancellationToken)
    {
        Hits = MonteCarlo.CountHits(Iterations, seed);
        return Task.CompletedTask;
    }
}

/// <summary>
/// CSP.NET section 4.2 (Tables 2 and 3): Monte Carlo Pi, sequential and split over processes.
/// </summary>
/// <remarks>
/// Both versions draw from a seeded <see cref="Random"/> (seed 115, and 115 + 10 i for worker i, as
/// in listing 8). On .NET Core a seeded Random uses the legacy .NET Framework algorithm, while an
/// unseeded one uses xoshiro256** (several times faster), so seeding both keeps the sequential and
/// the parallel version on the same generator, as they were in 2006.
/// </remarks>
internal sealed class MonteCarlo
{
    /// <summary>Stack size of the thread-process pool: the paper used "around 200 kilobytes" to fit 600 threads.</summary>
    internal const int StackSize = 256 * 1024;

    private readonly MonteCarloWorker[] _workers;

    /// <param name="processes">Number of workers.</param>
    /// <param name="totalIterations">Total iterations, split evenly (the remainder goes to the first workers).</param>
    /// <param name="pool">Pool for the thread processes.</param>
    internal MonteCarlo(int processes, long totalIterations, CSPThreadPool pool)
    {
        _workers = new MonteCarloWorker[processes];
        Threads = new Parallel { ThreadPool = pool };
        Async = new Parallel();
        for (int i = 0; i < processes; i++)
        {
            _workers[i] = new MonteCarloWorker(0, 115 + (i * 10));
            Threads.AddProcess((ICSPProcess)_workers[i]);
            Async.AddProcess((IAsyncCSPProcess)_workers[i]);
        }

        TotalIterations = totalIterations;
    }

    internal int Processes => _workers.Length;

    /// <summary>Total iterations of a run, split over the workers.</summary>
    internal long TotalIterations
    {
        get;
        set
        {
            field = value;
            long each = value / _workers.Length;
            long remainder = value % _workers.Length;
            for (int i = 0; i < _workers.Length; i++)
            {
                _workers[i].Iterations = each + (i < remainder ? 1 : 0);
            }
        }
    }

    /// <summary>The workers as thread processes on the pool given to the constructor (or set on it later).</summary>
    internal Parallel Threads { get; }

    /// <summary>The workers as async processes.</summary>
    internal Parallel Async { get; }

    /// <summary>Runs <see cref="Threads"/> and returns the estimate of pi.</summary>
    internal double RunThreads()
    {
        Threads.Run();
        return Estimate();
    }

    /// <summary>Runs <see cref="Threads"/> on a new pool of <see cref="StackSize"/> threads (every process gets a newly created thread), then releases it.</summary>
    internal double RunThreadsOnFreshPool()
    {
        CSPThreadPool previous = Threads.ThreadPool;
        var fresh = new CSPThreadPool(StackSize);
        Threads.ThreadPool = fresh;
        try
        {
            Threads.Run();
        }
        finally
        {
            Threads.ThreadPool = previous;
            fresh.Release();
        }

        return Estimate();
    }

    /// <summary>Runs <see cref="Async"/> and returns the estimate of pi.</summary>
    internal double RunAsyncProcesses()
    {
        Async.Run();
        return Estimate();
    }

    /// <summary>Listing 7: the sequential version.</summary>
    internal static double Sequential(long iterations) => 4.0 * CountHits(iterations, 115) / iterations;

    /// <remarks>
    /// Compiled straight to optimised code, and never inlined, so that the sequential version and
    /// every worker run the same machine code whatever the tiering state. On .NET 10.0 the
    /// tier-1 code that dynamic PGO produces for this loop runs about 1.9 times slower than the
    /// fully optimised code without PGO (about 16 instead of 8.5 ns per iteration here): with
    /// tiering, a method called 30 times (a run with many workers) would switch to the slow code
    /// while a sequential caller that inlined it would not, which skews every ratio.
    /// </remarks>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveOptimization | System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    internal static long CountHits(long iterations, int seed)
    {
        var random = new Random(seed);
        long hits = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = (random.NextDouble() * 2.0) - 1.0;
            double y = (random.NextDouble() * 2.0) - 1.0;
            if ((x * x) + (y * y) < 1)
            {
                hits++;
            }
        }

        return hits;
    }

    private double Estimate()
    {
        long hits = 0;
        foreach (MonteCarloWorker worker in _workers)
        {
            hits += worker.Hits;
        }

        return 4.0 * hits / TotalIterations;
    }
}

/// <summary>The shared start signal of a live-process run, and the count of parked processes.</summary>
/// <remarks>
/// Sharded: a task keeps its continuations in a list it locks to add one, and millions of
/// processes awaiting a single task from the pool threads contended for that lock (a sampled
/// trace of JVMCSP's program showed 8% of its thread time in Monitor.Enter's slow path). Each
/// await takes the next of <see cref="Shards"/> tasks instead; the memory is the same, 8 bytes
/// per waiting process in a continuation list.
/// </remarks>
internal sealed class LiveGate
{
    private const int Shards = 64;

    private readonly TaskCompletionSource[] _open = new TaskCompletionSource[Shards];
    private int _parked;
    private int _next;

    internal LiveGate()
    {
        for (int i = 0; i < Shards; i++)
        {
            _open[i] = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    /// <summary>Completes when <see cref="Open"/> is called. Awaiting it stores the awaiting state-machine box itself in the task's continuation list (8 bytes per waiter, no other allocation).</summary>
    internal Task Opened => _open[(Interlocked.Increment(ref _next) & int.MaxValue) % Shards].Task;

    internal int Parked => Volatile.Read(ref _parked);

    internal void ArrivedAndParking() => Interlocked.Increment(ref _parked);

    internal void Open()
    {
        foreach (TaskCompletionSource shard in _open)
        {
            shard.TrySetResult();
        }
    }
}

/// <summary>
/// Process A of a live pair (JVMCSP section 3.3): <c>exchanges</c> times, write on c1, then read
/// the reply on c2. Before the write of exchange <c>gateAt</c> it counts itself as parked: its
/// partner is held at the gate then, so that write parks on c1 holding its value.
/// </summary>
internal sealed class PairWriter(One2OneChannel<int> c1, One2OneChannel<int> c2, int exchanges, int gateAt, LiveGate gate) : IAsyncCSPProcess
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        for (int i = 0; i < exchanges; i++)
        {
            if (i == gateAt)
            {
                gate.ArrivedAndParking();
            }

            await c1.WriteAsync(i, cancellationToken);
            PaperChannels.Check(await c2.ReadAsync(cancellationToken), i, "Live pair");
        }
    }
}

/// <summary>
/// Process B of a live pair: <c>exchanges</c> times, read on c1, then write the value back on c2.
/// Before the read of exchange <c>gateAt</c> it waits at the gate.
/// </summary>
internal sealed class PairReplier(One2OneChannel<int> c1, One2OneChannel<int> c2, int exchanges, int gateAt, LiveGate gate) : IAsyncCSPProcess
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        for (int i = 0; i < exchanges; i++)
        {
            if (i == gateAt)
            {
                gate.ArrivedAndParking();
                await gate.Opened;
            }

            await c2.WriteAsync(await c1.ReadAsync(cancellationToken), cancellationToken);
        }
    }
}

/// <summary>What one live-process run measured.</summary>
/// <param name="UnitsRequested">Units asked for (pairs, or JVMCSP iterations).</param>
/// <param name="Units">Units created (fewer if the memory guard stopped creation).</param>
/// <param name="ProcessesPerUnit">Processes per unit as the paper counts them (2 per pair, 7 per JVMCSP iteration).</param>
/// <param name="ExtraProcesses">Processes outside the units (JVMCSP counts its main process: 1).</param>
internal sealed record LiveResult(
    long UnitsRequested,
    long Units,
    int ProcessesPerUnit,
    int ExtraProcesses,
    bool StoppedForMemory,
    double CreateSeconds,
    double StartToParkedSeconds,
    double ReleaseToEndSeconds,
    long LiveBytesBefore,
    long LiveBytesCreated,
    long LiveBytesParked,
    long GcHeapBytesParked,
    long WorkingSetParked,
    long PeakWorkingSet,
    long AllocatedBytes,
    double GcPauseSeconds,
    double CpuSeconds,
    int Gen0Collections,
    int Gen1Collections,
    int Gen2Collections,
    long WorkItems)
{
    internal long Processes => (ProcessesPerUnit * Units) + ExtraProcesses;

    internal long ProcessesRequested => (ProcessesPerUnit * UnitsRequested) + ExtraProcesses;

    internal double TotalSeconds => CreateSeconds + StartToParkedSeconds + ReleaseToEndSeconds;

    /// <summary>Live managed bytes per unit while every process is parked (GC.GetTotalMemory(true) after minus before).</summary>
    internal double BytesPerUnit => Units == 0 ? 0 : (double)(LiveBytesParked - LiveBytesBefore) / Units;

    /// <summary>Live managed bytes per process while every process is parked.</summary>
    internal double BytesPerProcess => Units == 0 ? 0 : (double)(LiveBytesParked - LiveBytesBefore) / Processes;

    /// <summary>Of which: channels, process objects and Parallel bookkeeping, before the run starts.</summary>
    internal double CreatedBytesPerProcess => Units == 0 ? 0 : (double)(LiveBytesCreated - LiveBytesBefore) / Processes;

    /// <summary>Of which: what running adds (state-machine boxes, waiters, Parallel's run state).</summary>
    internal double RunningBytesPerProcess => BytesPerProcess - CreatedBytesPerProcess;
}

/// <summary>
/// Runs a live-process program: creates its units in one <see cref="Parallel"/>, runs it until
/// every process that parks has said so at the <see cref="LiveGate"/>, measures, opens the gate
/// and waits for the end. Shared by the pair shape (<see cref="LivePairs"/>) and JVMCSP's own
/// program (<see cref="JvmcspProgram"/>).
/// </summary>
internal static class LiveRunner
{
    /// <param name="units">Units requested.</param>
    /// <param name="shape">Processes per unit and outside the units, as the paper counts them.</param>
    /// <param name="parkingPerUnit">Processes per unit that report at the gate before they park.</param>
    /// <param name="addUnit">Creates one unit and adds it to the main <see cref="Parallel"/>.</param>
    /// <param name="measureMemory">Force full collections to measure live bytes (slow on big heaps; not timed).</param>
    /// <param name="minAvailableBytes">
    /// Memory guard (0: none): stop creating units when the machine's available memory, minus what
    /// the units created so far will still allocate once running, drops below this.
    /// </param>
    /// <param name="runningBytesPerUnit">Estimate of what one unit allocates once running, for the guard.</param>
    /// <param name="log">Progress messages, or null.</param>
    internal static LiveResult Run(
        long units,
        (int PerUnit, int Extra) shape,
        int parkingPerUnit,
        Action<Parallel, LiveGate> addUnit,
        bool measureMemory,
        long minAvailableBytes,
        double runningBytesPerUnit,
        Action<string>? log)
    {
        var gate = new LiveGate();
        ResetPeakWorkingSet();
        long allocatedStart = GC.GetTotalAllocatedBytes(precise: true);
        long before = measureMemory ? GC.GetTotalMemory(forceFullCollection: true) : 0;
        var gc = new GcPhases();

        long workItemsStart = ThreadPool.CompletedWorkItemCount;
        TimeSpan cpuStart = Process.GetCurrentProcess().TotalProcessorTime;
        var watch = Stopwatch.StartNew();
        var main = new Parallel();
        long created = 0;
        bool stoppedForMemory = false;
        for (; created < units; created++)
        {
            if (minAvailableBytes > 0 && (created & 0x1FFFF) == 0 && created > 0)
            {
                long available = MachineMemory.AvailableBytes();
                long reserve = (long)(created * runningBytesPerUnit);
                if (available >= 0 && available - reserve < minAvailableBytes)
                {
                    log?.Invoke($"  stopped creating at {created:N0} units: {available / (1 << 20):N0} MiB available, {reserve / (1 << 20):N0} MiB still to come when they run, guard {minAvailableBytes / (1 << 20):N0} MiB");
                    stoppedForMemory = true;
                    break;
                }
            }

            addUnit(main, gate);
        }

        double createSeconds = watch.Elapsed.TotalSeconds;
        gc.EndPhase();
        TimeSpan cpu = Process.GetCurrentProcess().TotalProcessorTime - cpuStart;
        long afterCreate = measureMemory ? GC.GetTotalMemory(forceFullCollection: true) : 0;
        log?.Invoke($"  created {created:N0} units in {createSeconds:F2} s (CPU {cpu.TotalSeconds:F2} s, load {LoadAverage()})");

        gc.StartPhase();
        cpuStart = Process.GetCurrentProcess().TotalProcessorTime;
        watch.Restart();
        Task run = main.RunAsync();
        WaitUntilParked(gate, parkingPerUnit * created, run);
        double startSeconds = watch.Elapsed.TotalSeconds;
        gc.EndPhase();
        TimeSpan phaseCpu = Process.GetCurrentProcess().TotalProcessorTime - cpuStart;
        cpu += phaseCpu;
        long workItems = ThreadPool.CompletedWorkItemCount - workItemsStart;
        log?.Invoke($"  all {parkingPerUnit * created:N0} parking processes parked after {startSeconds:F2} s (CPU {phaseCpu.TotalSeconds:F2} s, {workItems:N0} thread-pool work items, load {LoadAverage()})");

        long parked = 0;
        long heap = 0;
        long workingSet = 0;
        if (measureMemory)
        {
            parked = GC.GetTotalMemory(forceFullCollection: true);
            heap = GC.GetGCMemoryInfo(GCKind.Any).HeapSizeBytes;
            workingSet = Environment.WorkingSet;
        }

        // Keep the parked state reachable until measured (the Parallel holds everything anyway).
        GC.KeepAlive(main);

        gc.StartPhase();
        cpuStart = Process.GetCurrentProcess().TotalProcessorTime;
        watch.Restart();
        gate.Open();
        run.GetAwaiter().GetResult();
        double releaseSeconds = watch.Elapsed.TotalSeconds;
        gc.EndPhase();
        phaseCpu = Process.GetCurrentProcess().TotalProcessorTime - cpuStart;
        cpu += phaseCpu;
        long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedStart;
        long peak = PeakWorkingSet();
        log?.Invoke($"  released, all ended after {releaseSeconds:F2} s (CPU {phaseCpu.TotalSeconds:F2} s)");

        return new LiveResult(units, created, shape.PerUnit, shape.Extra, stoppedForMemory, createSeconds, startSeconds, releaseSeconds,
            before, afterCreate, parked, heap, workingSet, peak, allocated, gc.Pause.TotalSeconds, cpu.TotalSeconds, gc.Gen0, gc.Gen1, gc.Gen2, ThreadPool.CompletedWorkItemCount - workItemsStart);
    }

    /// <summary>The machine's load averages (Linux), printed beside the phases' times.</summary>
    private static string LoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (IOException)
        {
            return "?";
        }
        catch (UnauthorizedAccessException)
        {
            return "?";
        }
    }

    /// <summary>Waits until every parking process has reported it is about to park and the thread pool has run dry.</summary>
    private static void WaitUntilParked(LiveGate gate, long processes, Task run)
    {
        var spin = new SpinWait();
        while (gate.Parked < processes)
        {
            if (run.IsFaulted)
            {
                run.GetAwaiter().GetResult();
            }

            spin.SpinOnce(sleep1Threshold: 20);
        }

        // The last arrivals may still be between counting themselves and parking.
        while (ThreadPool.PendingWorkItemCount > 0)
        {
            Thread.Sleep(1);
        }

        Thread.Sleep(20);
    }

    /// <summary>Resets the kernel's peak-RSS mark of this process (Linux: "5" to /proc/self/clear_refs), so that each run reports its own peak.</summary>
    private static void ResetPeakWorkingSet()
    {
        try
        {
            File.WriteAllText("/proc/self/clear_refs", "5");
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    /// <summary>Peak RSS since the last reset (VmHWM), or the process's own peak where /proc is missing.</summary>
    private static long PeakWorkingSet()
    {
        try
        {
            foreach (string line in File.ReadLines("/proc/self/status"))
            {
                if (line.StartsWith("VmHWM:", StringComparison.Ordinal))
                {
                    string[] parts = line[6..].Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    return long.Parse(parts[0], System.Globalization.CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }

        return Process.GetCurrentProcess().PeakWorkingSet64;
    }

    /// <summary>GC pauses and collections inside the timed phases only (the measuring collections are excluded).</summary>
    private sealed class GcPhases
    {
        private TimeSpan _pauseStart;
        private int _gen0Start;
        private int _gen1Start;
        private int _gen2Start;

        internal GcPhases() => StartPhase();

        internal TimeSpan Pause { get; private set; }

        internal int Gen0 { get; private set; }

        internal int Gen1 { get; private set; }

        internal int Gen2 { get; private set; }

        internal void StartPhase()
        {
            _pauseStart = GC.GetTotalPauseDuration();
            _gen0Start = GC.CollectionCount(0);
            _gen1Start = GC.CollectionCount(1);
            _gen2Start = GC.CollectionCount(2);
        }

        internal void EndPhase()
        {
            Pause += GC.GetTotalPauseDuration() - _pauseStart;
            Gen0 += GC.CollectionCount(0) - _gen0Start;
            Gen1 += GC.CollectionCount(1) - _gen1Start;
            Gen2 += GC.CollectionCount(2) - _gen2Start;
        }
    }
}

/// <summary>
/// JVMCSP section 3.3 / Table 3, simpler shape: N pairs of async processes, each pair connected by
/// two One2OneChannel&lt;int&gt; (A writes to B on c1, B writes back on c2, <c>exchanges</c> times).
/// After its first exchange every B waits at a shared gate and every A parks writing its second
/// value, so all 2N processes are alive and parked at the same time.
/// </summary>
internal static class LivePairs
{
    /// <summary>Creates <paramref name="pairs"/> pairs in one <see cref="Parallel"/> and runs them through <see cref="LiveRunner"/>.</summary>
    /// <param name="pairs">Pairs requested (2 processes each).</param>
    /// <param name="exchanges">Round trips per pair (at least 1); the gate sits after the first when there are two or more.</param>
    /// <param name="measureMemory">Force full collections to measure live bytes (slow on big heaps; not timed).</param>
    /// <param name="minAvailableBytes">Memory guard (0: none); see <see cref="LiveRunner.Run"/>.</param>
    /// <param name="runningBytesPerPair">Estimate of what one pair allocates once running, for the guard.</param>
    /// <param name="log">Progress messages, or null.</param>
    internal static LiveResult Run(long pairs, int exchanges, bool measureMemory, long minAvailableBytes = 0, double runningBytesPerPair = 1000, Action<string>? log = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(exchanges, 1);
        int gateAt = exchanges > 1 ? 1 : 0;
        return LiveRunner.Run(
            pairs,
            (2, 0),
            2,
            (main, gate) =>
            {
                var c1 = new One2OneChannel<int>();
                var c2 = new One2OneChannel<int>();
                main.AddProcess(new PairWriter(c1, c2, exchanges, gateAt, gate));
                main.AddProcess(new PairReplier(c1, c2, exchanges, gateAt, gate));
            },
            measureMemory,
            minAvailableBytes,
            runningBytesPerPair,
            log);
    }
}

/// <summary>
/// JVMCSP's own Table 3 program (section 3.3), written with CspNet's public API as a user would:
/// <code>
/// proc void foo(chan&lt;int&gt;.read c1r, chan&lt;int&gt;.write c2w) { int x; par { x = c1r.read(); c2w.write(10); } }
/// proc void bar(chan&lt;int&gt;.write c1w, chan&lt;int&gt;.read c2r) { int y; par { y = c2r.read(); c1w.write(20); } }
/// proc void main(string[] args) { par for (int i = 0; i &lt; n; i++) { chan&lt;int&gt; c1, c2; par { foo(c1.read, c2.write); bar(c1.write, c2.read); } } }
/// </code>
/// The <c>par for</c> is one <see cref="Parallel"/>; each iteration adds a <see cref="Parallel"/>
/// of <c>foo</c> and <c>bar</c>, each a <see cref="Parallel"/> of one read and one write (async
/// processes) over the iteration's two <see cref="One2OneChannel{T}"/>. JVMCSP counts 7 processes
/// per iteration (the iteration's par, foo, bar and the four statements of their pars) plus main.
/// </summary>
/// <remarks>
/// To measure every process alive at once, as JVMCSP's run queue held them, each read first
/// reports at a shared gate and waits for it to open, and each write reports and then parks
/// holding its value; the gate opens once all have reported. The gate's continuation list costs
/// 8 bytes per read (16 per iteration), included in the figures.
/// </remarks>
internal static class JvmcspProgram
{
    /// <summary>Processes per iteration as JVMCSP counts them.</summary>
    internal const int ProcessesPerIteration = 7;

    /// <summary>Runs <paramref name="iterations"/> iterations through <see cref="LiveRunner"/>.</summary>
    /// <param name="iterations">Iterations of the par for requested.</param>
    /// <param name="measureMemory">Force full collections to measure live bytes (slow on big heaps; not timed).</param>
    /// <param name="minAvailableBytes">Memory guard (0: none); see <see cref="LiveRunner.Run"/>.</param>
    /// <param name="runningBytesPerIteration">Estimate of what one iteration allocates once running, for the guard.</param>
    /// <param name="log">Progress messages, or null.</param>
    internal static LiveResult Run(long iterations, bool measureMemory, long minAvailableBytes = 0, double runningBytesPerIteration = 1000, Action<string>? log = null) =>
        LiveRunner.Run(iterations, (ProcessesPerIteration, 1), 4, AddIteration, measureMemory, minAvailableBytes, runningBytesPerIteration, log);

    /// <summary>One iteration of the par for: its channels and its par of foo and bar.</summary>
    internal static void AddIteration(Parallel main, LiveGate gate)
    {
        var c1 = new One2OneChannel<int>();
        var c2 = new One2OneChannel<int>();
        var iteration = new Parallel();
        iteration.AddProcess(Foo(c1, c2, gate));
        iteration.AddProcess(Bar(c1, c2, gate));
        main.AddProcess(iteration);
    }

    private static Parallel Foo(IChannelIn<int> c1r, IChannelOut<int> c2w, LiveGate gate) =>
        new(new JvmcspRead(c1r, gate), new JvmcspWrite(c2w, 10, gate));

    private static Parallel Bar(IChannelOut<int> c1w, IChannelIn<int> c2r, LiveGate gate) =>
        new(new JvmcspRead(c2r, gate), new JvmcspWrite(c1w, 20, gate));

    /// <summary><c>x = c.read()</c>, after the gate.</summary>
    private sealed class JvmcspRead(IChannelIn<int> input, LiveGate gate) : IAsyncCSPProcess
    {
        internal int Value { get; private set; }

        public async Task RunAsync(CancellationToken cancellationToken)
        {
            gate.ArrivedAndParking();
            await gate.Opened;
            Value = await input.ReadAsync(cancellationToken);
        }
    }

    /// <summary><c>c.write(value)</c>: parks holding the value until the reader passes the gate.</summary>
    private sealed class JvmcspWrite(IChannelOut<int> output, int value, LiveGate gate) : IAsyncCSPProcess
    {
        public async Task RunAsync(CancellationToken cancellationToken)
        {
            gate.ArrivedAndParking();
            await output.WriteAsync(value, cancellationToken);
        }
    }
}

/// <summary>Machine memory as the OS reports it (Linux /proc/meminfo); -1 where unknown.</summary>
internal static class MachineMemory
{
    internal static long AvailableBytes() => Read("MemAvailable:");

    internal static long TotalBytes() => Read("MemTotal:");

    private static long Read(string key)
    {
        try
        {
            foreach (string line in File.ReadLines("/proc/meminfo"))
            {
                if (line.StartsWith(key, StringComparison.Ordinal))
                {
                    string[] parts = line[key.Length..].Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    return long.Parse(parts[0], System.Globalization.CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }

        return -1;
    }
}

/// <summary>
/// Sizes of the pieces a live pair is made of, measured one kind of object at a time:
/// allocated bytes on the current thread (exact) for objects built synchronously, live bytes
/// (GC.GetTotalMemory(true) deltas) for what <see cref="Parallel"/> builds on pool threads.
/// </summary>
internal sealed record LiveBreakdown(
    double ChannelBytes,
    double WaiterBytes,
    double WriterObjectBytes,
    double ReplierObjectBytes,
    double WriterBoxBytes,
    double ReplierBoxBytes,
    double ParallelEntryBytes,
    double ParallelRunBytesPerProcess)
{
    /// <summary>Everything but the waiters, per pair.</summary>
    internal double PairBytesWithoutWaiters =>
        (2 * ChannelBytes) + WriterObjectBytes + ReplierObjectBytes + WriterBoxBytes + ReplierBoxBytes + (2 * ParallelEntryBytes) + (2 * ParallelRunBytesPerProcess);

    /// <param name="count">Objects of each kind to average over.</param>
    internal static LiveBreakdown Measure(int count = 20_000)
    {
        var keep = new object[count];
        var gates = new LiveGate[count];
        for (int i = 0; i < count; i++)
        {
            gates[i] = new LiveGate();
        }

        // A fresh One2OneChannel<int>: everything its constructor allocates (channel, core, lock...).
        long start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            keep[i] = new One2OneChannel<int>();
        }

        double channel = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;

        // An AsyncWaiter<int>: a WriteAsync with no reader parks one.
        var pending = new ValueTask[count];
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
#pragma warning disable CA2012 // Kept, never awaited: the writes stay parked; only their allocation is measured.
            pending[i] = ((One2OneChannel<int>)keep[i]).WriteAsync(i);
#pragma warning restore CA2012
        }

        double waiter = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;
        GC.KeepAlive(pending);

        var c1 = new One2OneChannel<int>[count];
        var c2 = new One2OneChannel<int>[count];
        for (int i = 0; i < count; i++)
        {
            c1[i] = new One2OneChannel<int>();
            c2[i] = new One2OneChannel<int>();
        }

        var writers = new PairWriter[count];
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            writers[i] = new PairWriter(c1[i], c2[i], 2, 0, gates[i]);
        }

        double writerObject = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;

        var repliers = new PairReplier[count];
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            repliers[i] = new PairReplier(c1[i], c2[i], 2, 0, gates[i]);
        }

        double replierObject = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;

        // The writer's state-machine box: its first write parks (no reader yet), allocating box + waiter.
        var tasks = new Task[count];
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            tasks[i] = writers[i].RunAsync(CancellationToken.None);
        }

        double writerBox = ((double)(GC.GetAllocatedBytesForCurrentThread() - start) / count) - waiter;

        // The replier's box: with gateAt 0 it first awaits its own gate (first continuation of a task: no list).
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            tasks[i] = repliers[i].RunAsync(CancellationToken.None);
        }

        double replierBox = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;
        GC.KeepAlive(keep);

        // Parallel's own cost per process: its array slots while idle, and what a run adds, with
        // processes that allocate nothing.
        var shared = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var idle = new IdleProcess(shared.Task);
        long before = GC.GetTotalMemory(forceFullCollection: true);
        var parallel = new Parallel();
        for (int i = 0; i < count; i++)
        {
            parallel.AddProcess(idle);
        }

        long created = GC.GetTotalMemory(forceFullCollection: true);
        Task run = parallel.RunAsync();
        while (idle.Started < count || ThreadPool.PendingWorkItemCount > 0)
        {
            Thread.Sleep(1);
        }

        Thread.Sleep(20);
        long running = GC.GetTotalMemory(forceFullCollection: true);
        double entry = (double)(created - before) / count;
        double perRun = (double)(running - created) / count;
        shared.SetResult();
        run.GetAwaiter().GetResult();

        GC.KeepAlive(writers);
        GC.KeepAlive(repliers);
        GC.KeepAlive(tasks);
        return new LiveBreakdown(channel, waiter, writerObject, replierObject, writerBox, replierBox, entry, perRun);
    }

    /// <summary>An async process that allocates nothing: it returns a shared task.</summary>
    private sealed class IdleProcess(Task wait) : IAsyncCSPProcess
    {
        private int _started;

        internal int Started => Volatile.Read(ref _started);

        public Task RunAsync(CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref _started);
            return wait;
        }
    }
}
