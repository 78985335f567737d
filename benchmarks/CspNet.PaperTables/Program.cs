using System.Diagnostics;
using System.Runtime;
using CspNet.Benchmarks.Papers;
using static CspNet.PaperTables.Harness;

namespace CspNet.PaperTables;

/// <summary>
/// Reproduces CSP.NET Tables 1-3 and JVMCSP Tables 2-3 (CommsTime, live processes) with CspNet,
/// printing the papers' figures beside today's. See README.md.
/// </summary>
internal static class Program
{
    private static int Main(string[] args) =>
        args.Length > 0 && args[0] == Distributed.Cluster.NodeSwitch
            ? Distributed.NodeProgram.RunAsync(args[1..]).GetAwaiter().GetResult()
            : Cli.Run(Options.Command(Run), args);

    private static int Run(Options options)
    {
        var total = Stopwatch.StartNew();
        if (options.Quick)
        {
            WarmupTime = TimeSpan.FromMilliseconds(20);
        }

        string mode = options.Quick ? "QUICK (smoke test: sizes far too small for meaningful figures)" : options.Full ? "FULL (the papers' sizes)" : "normal";
        Console.WriteLine("CspNet: the tables of CSP.NET (Lehmberg & Olsen, CPA 2006) and JVMCSP (Shrestha & Pedersen, CPA 2016)");
        Console.WriteLine($"Mode:     {mode}; median of {options.Reps} timed run(s) (async ping-pong: {2 * options.Reps}) after at least {WarmupTime.TotalMilliseconds:F0} ms of warm-up runs");
        Console.WriteLine(MachineInfo());
        Console.WriteLine("Paper machines: CSP.NET: Pentium 4M 2 GHz (1 core), 512 MB, Windows XP SP2, .NET 2.0, Java 5.0.");
        Console.WriteLine("                JVMCSP: CommsTime on AMD Opteron 6274 2.2 GHz (single-core scheduler); live processes on Xeon E5-2630 v3, 128 GB.");

        try
        {
            if (options.Distributed)
            {
                Distributed.DistributedTables.RunAsync(options).GetAwaiter().GetResult();
                Console.WriteLine();
                Console.WriteLine($"Done in {total.Elapsed.TotalSeconds:F1} s; load {LoadAverage()}.");
                return 0;
            }

            if (options.Runs("t1"))
            {
                Table1(options);
            }

            if (options.Runs("t2"))
            {
                Table2(options);
            }

            if (options.Runs("t3"))
            {
                Table3(options);
            }

            if (options.Runs("comms"))
            {
                CommsTimeTable(options);
            }

            if (options.Runs("jvmcsp"))
            {
                JvmcspTable(options);
            }

            if (options.Runs("live"))
            {
                LiveTable(options);
            }

            if (options.CensusIterations > 0)
            {
                Census.Print(options.CensusIterations);
            }
        }
        catch (Exception exception)
        {
            Console.Error.WriteLine($"FAILED: {exception}");
            return 1;
        }

        Console.WriteLine();
        Console.WriteLine($"Done in {total.Elapsed.TotalSeconds:F1} s; load {LoadAverage()}.");
        return 0;
    }

    private static void Section(string title, string? note = null)
    {
        Console.WriteLine();
        Console.WriteLine(title);
        if (note is not null)
        {
            foreach (string line in note.Split('\n'))
            {
                Console.WriteLine("  " + line.TrimEnd());
            }
        }

        Console.WriteLine($"  Load average before: {LoadAverage()}");
    }

    // ---- CSP.NET Table 1 ----------------------------------------------------------------------

    private static readonly Dictionary<ChannelKind, (int Jcsp, int CspNet2006)> s_table1 = new()
    {
        [ChannelKind.One2One] = (16975, 12488),
        [ChannelKind.Any2One] = (17165, 17825),
        [ChannelKind.One2Any] = (16854, 12257),
        [ChannelKind.Any2Any] = (17125, 17524),
    };

    private static void Table1(Options options)
    {
        const int PaperIntegers = 500_000;
        int integers = options.Quick ? 2_000 : options.Full ? PaperIntegers : 100_000;
        int warmup = Math.Max(integers / 10, 500);
        double scale = (double)PaperIntegers / integers;
        string measured = integers == PaperIntegers
            ? "500,000 integers per run"
            : $"{integers:N0} integers per run, times x {scale:0.##} for 500,000 (time is linear in the count)";
        Section(
            "CSP.NET Table 1: ms to send 500,000 integers around the ring A -> B -> C -> A (3 unbuffered channels of one kind)",
            $"Measured: {measured}; warm-up runs of {warmup:N0} integers; median of {options.Reps} runs (threads), {2 * options.Reps} (async, STC).\n"
            + "Threads = 3 thread processes (CSPThreadPool.Default, reused);\n"
            + "async = 3 async processes; STC = System.Threading.Channels Channel.CreateBounded<int>(0) (rendezvous), async loops, same ring.");

        var rows = new List<string[]>();
        var chartRows = new List<Table1Row>();
        foreach (ChannelKind kind in Enum.GetValues<ChannelKind>())
        {
            var ring = new Ring(kind);
            Stats Time(Parallel parallel, int reps, double warmupFactor) => Measure(
                () => { ring.Count = warmup; parallel.Run(); },
                () => { ring.Count = integers; parallel.Run(); },
                reps,
                warmupFactor).Scale(scale);

            // Async runs are short and swing with the scheduling of the pool threads: more of them.
            Stats threads = Time(ring.Threads, options.Reps, 1);
            Stats async = Time(ring.Async, 2 * options.Reps, 3);
            Stats stc = Time(ring.Stc, 2 * options.Reps, 3);
            (int jcsp, int csp2006) = s_table1[kind];
            chartRows.Add(new Table1Row(kind.ToString(), jcsp, csp2006, threads.Median, async.Median, stc.Median));
            rows.Add([
                kind.ToString(), N(jcsp), N(csp2006),
                Ms(threads.Median), Ms(async.Median), Ms(stc.Median),
                N(csp2006 / threads.Median, 1) + "x", N(csp2006 / async.Median, 0) + "x",
                N(1000 * threads.Median / PaperIntegers, 2), N(1000 * async.Median / PaperIntegers, 3),
            ]);
        }

        PrintTable(
            ["Channel", "JCSP 2006", "CSP.NET 2006", "CspNet threads", "CspNet async", "STC async", "2006/threads", "2006/async", "us/int thr", "us/int async"],
            rows);
        Chart(options, dir => Charts.WriteTable1(dir, chartRows));
        Console.WriteLine($"  Load average after: {LoadAverage()}");
    }

    /// <summary>Writes a chart with <paramref name="write"/> when --charts asked for them, and says where.</summary>
    internal static void Chart(Options options, Func<string, string> write)
    {
        if (options.ChartsDirectory is { } directory)
        {
            Console.WriteLine($"  Chart: {write(directory)}");
        }
    }

    // ---- CSP.NET Table 2 ----------------------------------------------------------------------

    private static readonly (int Processes, int PaperMs)[] s_table2 =
        [(1, 109371), (50, 110121), (100, 109989), (200, 110092), (300, 110579), (400, 110889), (600, 111480)];

    private const int Table2PaperSequentialMs = 112242;

    private static void Table2(Options options)
    {
        const long PaperIterations = 1_200_000_000;
        long divisor = options.Quick ? 10_000 : options.Full ? 1 : 100;
        long iterations = PaperIterations / divisor;
        Section(
            $"CSP.NET Table 2: Monte Carlo Pi, fixed work split over N processes: {PaperIterations:N0} iterations / {divisor:N0} = {iterations:N0}",
            $"Paper: one 2 GHz core, times in ms for 1.2e9 iterations; today's times are for {iterations:N0} iterations on {Environment.ProcessorCount} cores,\n"
            + "so compare the ratios to the sequential run. Thread processes: a CSPThreadPool with 256 KiB stacks (paper: ~200 KB), warm.\n"
            + "Async processes compute without awaiting, on the .NET thread pool. All versions use a seeded System.Random (same generator).");

        var pool = new CSPThreadPool(MonteCarlo.StackSize);
        WarmUpMonteCarlo();
        Stats sequential = Measure(() => MonteCarlo.Sequential(iterations / 10), () => MonteCarlo.Sequential(iterations), options.Reps);
        var rows = new List<string[]>();
        foreach ((int processes, int paperMs) in s_table2)
        {
            var monteCarlo = new MonteCarlo(processes, iterations, pool);
            Stats threads = MeasureMonteCarlo(monteCarlo, monteCarlo.RunThreads, options);
            Stats async = MeasureMonteCarlo(monteCarlo, monteCarlo.RunAsyncProcesses, options);
            rows.Add([
                N(processes), N(paperMs), N(paperMs / (double)Table2PaperSequentialMs, 3),
                Ms(threads.Median), N(threads.Median / sequential.Median, 3),
                Ms(async.Median), N(async.Median / sequential.Median, 3),
            ]);
        }

        pool.Release();
        rows.Add(["sequential", N(Table2PaperSequentialMs), "1.000", Ms(sequential.Median), "1.000", Ms(sequential.Median), "1.000"]);
        PrintTable(["Processes", "paper ms", "paper /seq", "threads ms", "threads /seq", "async ms", "async /seq"], rows);
        Console.WriteLine($"  Load average after: {LoadAverage()}");
    }

    // ---- CSP.NET Table 3 ----------------------------------------------------------------------

    private static readonly (long Iterations, int ParMs, int SeqMs)[] s_table3 =
    [
        (400, 225, 1), (4_000, 224, 1), (40_000, 225, 5), (400_000, 262, 42),
        (4_000_000, 595, 378), (40_000_000, 3998, 3798), (400_000_000, 37062, 37258),
    ];

    private static void Table3(Options options)
    {
        const int Processes = 400;
        long largest = options.Quick ? 400_000 : options.Full ? 400_000_000 : 40_000_000;
        Section(
            "CSP.NET Table 3: Monte Carlo Pi, 400 processes versus sequential, by total iterations (the paper's counts, unscaled)",
            $"Rows up to {largest:N0} iterations{(largest < 400_000_000 ? " (the larger paper rows need --full)" : "")}. Paper: 400 threads created per run on one core.\n"
            + "new threads = a new CSPThreadPool (256 KiB stacks) per run: 400 threads created, as in 2006; pooled = the same 400 threads\n"
            + "reused run after run; async = 400 async processes. All times in ms.");

        var warmPool = new CSPThreadPool(MonteCarlo.StackSize);
        WarmUpMonteCarlo();
        var rows = new List<string[]>();
        foreach ((long iterations, int parMs, int seqMs) in s_table3.Where(r => r.Iterations <= largest))
        {
            var monteCarlo = new MonteCarlo(Processes, iterations, warmPool);
            Stats fresh = MeasureMonteCarlo(monteCarlo, monteCarlo.RunThreadsOnFreshPool, options);
            Stats pooled = MeasureMonteCarlo(monteCarlo, monteCarlo.RunThreads, options);
            Stats async = MeasureMonteCarlo(monteCarlo, monteCarlo.RunAsyncProcesses, options);
            long small = Math.Min(iterations, 1_000_000);
            Stats sequential = Measure(() => MonteCarlo.Sequential(small), () => MonteCarlo.Sequential(iterations), options.Reps);
            rows.Add([N(iterations), N(parMs), N(seqMs), Ms(fresh.Median), Ms(pooled.Median), Ms(async.Median), Ms(sequential.Median)]);
        }

        warmPool.Release();
        PrintTable(["Iterations", "paper par", "paper seq", "new threads", "pooled threads", "async", "sequential"], rows);
        Console.WriteLine($"  Load average after: {LoadAverage()}");
    }

    /// <summary>Gets the Monte Carlo loop to its optimised tier (30 calls, then the background JIT) before any row is timed.</summary>
    private static void WarmUpMonteCarlo()
    {
        for (int i = 0; i < 60; i++)
        {
            MonteCarlo.CountHits(10_000, i);
        }

        Thread.Sleep(200);
    }

    /// <summary>Times <paramref name="run"/>; the warm-up runs use at most 1,000,000 iterations in total.</summary>
    private static Stats MeasureMonteCarlo(MonteCarlo monteCarlo, Func<double> run, Options options)
    {
        long iterations = monteCarlo.TotalIterations;
        long small = Math.Min(iterations, 1_000_000);
        return Measure(
            () => { monteCarlo.TotalIterations = small; run(); monteCarlo.TotalIterations = iterations; },
            () => run(),
            options.Reps);
    }

    // ---- JVMCSP Table 2: CommsTime ------------------------------------------------------------

    private static void CommsTimeTable(Options options)
    {
        int threadIterations = options.Quick ? 2_000 : options.Full ? 1_000_000 : 50_000;
        int asyncIterations = options.Quick ? 10_000 : options.Full ? 1_000_000 : 250_000;
        Section(
            "JVMCSP Table 2: CommsTime, Prefix -> Delta -> Successor -> Prefix and Delta -> Consumer (4 communications per iteration)",
            $"Measured: {threadIterations:N0} iterations per run with thread processes, {asyncIterations:N0} with async processes and STC\n"
            + "(System.Threading.Channels rendezvous channels, async loops). Delta writes its outputs in sequence. Paper figures: AMD Opteron 6274 / Linux.");

        var commsTime = new CommsTime();
        Stats Time(Parallel parallel, int iterations, int reps, double warmupFactor) => Measure(
            () => { commsTime.Iterations = iterations / 10; parallel.Run(); },
            () => { commsTime.Iterations = iterations; parallel.Run(); },
            reps,
            warmupFactor).Scale(1000.0 / iterations); // microseconds per iteration

        double threads = Time(commsTime.Threads, threadIterations, options.Reps, 1).Median;
        double async = Time(commsTime.Async, asyncIterations, 2 * options.Reps, 3).Median;
        double stc = Time(commsTime.Stc, asyncIterations, 2 * options.Reps, 3).Median;
        const int C = CommsTime.CommunicationsPerIteration;
        PrintTable(
            ["", "LiteProc", "JCSP", "JVMCSP", "CspNet threads", "CspNet async", "STC async"],
            [
                ["us / iteration", "13.56", "136.00", "7.52", N(threads, 2), N(async, 3), N(stc, 3)],
                ["us / communication", "3.90", "35.00", "1.88", N(threads / C, 2), N(async / C, 3), N(stc / C, 3)],
            ]);
        Chart(options, dir => Charts.WriteCommsTime(dir, new CommsTimeRow(threads, async, stc)));
        Console.WriteLine($"  JVMCSP 1.88 us / CspNet async {N(async / C, 3)} us = {N(1.88 / (async / C), 1)}x; / CspNet threads {N(threads / C, 2)} us = {N(1.88 / (threads / C), 2)}x.");
        Console.WriteLine($"  Load average after: {LoadAverage()}");
    }

    // ---- JVMCSP Table 3: live processes -------------------------------------------------------

    private static readonly (long Processes, double Seconds, double Gb)[] s_jvmcsp =
    [
        (7_000_001, 7.53, 1.79), (10_500_001, 16.03, 3.02), (14_000_001, 25.86, 4.10), (210_000_001, 642.80, 63.91),
        (350_000_001, 1235.12, 94.50), (420_000_001, 1443.40, 125.82), (476_000_001, 1800.79, 126.11), (480_900_001, 1801.40, 126.20),
    ];

    private static (long Processes, double Gb)[] JvmcspPoints => [.. s_jvmcsp.Select(r => (r.Processes, r.Gb))];

    private static void JvmcspTable(Options options)
    {
        long guard = (long)(options.MinFreeGiB * (1L << 30));
        Section(
            "JVMCSP Table 3: JVMCSP's own program: par for { chan c1, c2; par { foo(c1.read, c2.write); bar(c1.write, c2.read) } },\n"
            + "  foo = par { x = c1r.read(); c2w.write(10) }, bar = par { y = c2r.read(); c1w.write(20) }",
            "CspNet: the par for is one Parallel; each iteration adds a Parallel of foo and bar, each a Parallel of one read and one write\n"
            + "(async processes) over the iteration's two One2OneChannel<int>. Processes counted as JVMCSP counts them: 7 per iteration + main.\n"
            + "To hold every process alive at once (JVMCSP's run queue), each read waits at a shared gate and each write parks holding its value;\n"
            + "the gate opens once all have reported (its continuation list: 16 B per iteration, included). Live bytes = GC.GetTotalMemory(true)\n"
            + "while all are parked minus before creating anything; peak RSS = the kernel's VmHWM over the run (reset before it).\n"
            + $"GC pause = GC.GetTotalPauseDuration() inside the timed phases. Guard: stop creating below {options.MinFreeGiB} GiB available.");

        List<long> processCounts = [.. options.JvmcspCounts];
        if (processCounts.Count == 0)
        {
            processCounts.AddRange(options.Quick ? [70_001] : [7_000_001, 10_500_001, 14_000_001]);
        }

        var results = new List<LiveResult>();
        foreach (long processes in processCounts)
        {
            results.Add(RunJvmcsp(JvmcspIterations(processes), guard, results));
        }

        if (options.JvmcspMax)
        {
            // The largest count that fits: from the last run's bytes per iteration (or JVMCSP's) plus
            // 25% for transients and GC headroom; the creation guard stops it if the estimate is short.
            double perIteration = 1.25 * (results.Count > 0 ? results[^1].BytesPerUnit : 4000);
            long fitting = (long)((MachineMemory.AvailableBytes() - guard) / perIteration);
            Console.WriteLine($"  --jvmcsp-max: about {N(perIteration)} B per iteration with headroom: {N(fitting)} iterations ({N((7 * fitting) + 1)} processes) fit now");
            results.Add(RunJvmcsp(fitting, guard, results));
        }

        Console.WriteLine();
        PrintTable(
            ["Processes", "JVMCSP s", "JVMCSP GB", "JVMCSP B/iter", "CspNet s", "create/park/end s", "CPU s", "live GB", "B/iter", "B/process", "peak RSS GB", "RSS/live", "GC pause s", "GCs 0/1/2", "pool items/iter", "note"],
            results.Select(r =>
            {
                (long Processes, double Seconds, double Gb)? paper = s_jvmcsp.Where(p => p.Processes == r.Processes).Select(p => ((long, double, double)?)p).FirstOrDefault();
                double live = r.LiveBytesParked - r.LiveBytesBefore;
                return (IReadOnlyList<string>)[
                    N(r.Processes),
                    paper is { } p1 ? N(p1.Seconds, 2) : "-",
                    paper is { } p2 ? N(p2.Gb, 2) : "-",
                    paper is { } p3 ? N(p3.Gb * 1e9 / ((p3.Processes - 1) / JvmcspProgram.ProcessesPerIteration)) : "-",
                    N(r.TotalSeconds, 2),
                    $"{N(r.CreateSeconds, 2)}/{N(r.StartToParkedSeconds, 2)}/{N(r.ReleaseToEndSeconds, 2)}",
                    N(r.CpuSeconds, 2),
                    N(live / 1e9, 2),
                    N(r.BytesPerUnit),
                    N(r.BytesPerProcess, 1),
                    N(r.PeakWorkingSet / 1e9, 2),
                    N(r.PeakWorkingSet / live, 2),
                    N(r.GcPauseSeconds, 2),
                    $"{r.Gen0Collections}/{r.Gen1Collections}/{r.Gen2Collections}",
                    N((double)r.WorkItems / r.Units, 2),
                    r.StoppedForMemory ? $"stopped by the memory guard (asked {N(r.ProcessesRequested)})" : "",
                ];
            }));
        Console.WriteLine("  pool items/iter = .NET thread-pool work items completed in the timed phases, per iteration.");
        Console.WriteLine("  JVMCSP GB is the paper's \"Memory Used\" (decimal GB assumed); B/iter divides it by its iterations (processes - 1) / 7.");
        Console.WriteLine("  CspNet s = create + start to parked + release to end (wall clock); CPU s = this process's CPU time in those phases (all threads, GC included).");
        Chart(options, dir => Charts.WriteLive(dir, "jvmcsp-live.png", "JVMCSP Table 3: JVMCSP's program, processes against memory", JvmcspPoints, results));
        Console.WriteLine($"  Load average after: {LoadAverage()}");
    }

    /// <summary>Iterations of the par for that make <paramref name="processes"/> JVMCSP-counted processes (7 per iteration + main).</summary>
    private static long JvmcspIterations(long processes) => Math.Max(1, (processes - 1) / JvmcspProgram.ProcessesPerIteration);

    private static LiveResult RunJvmcsp(long iterations, long guard, List<LiveResult> earlier)
    {
        // What an iteration allocates once running, for the memory guard: half of the last measured
        // live bytes (creation is the other half), or a generous default before any measurement.
        double running = earlier.Count > 0 ? 0.6 * earlier[^1].BytesPerUnit : 2500;
        Console.WriteLine($"  running {N(iterations)} iterations = {N((JvmcspProgram.ProcessesPerIteration * iterations) + 1)} processes (available memory {FormatGiB(MachineMemory.AvailableBytes())}, load {LoadAverage()})");
        LiveResult result = JvmcspProgram.Run(iterations, measureMemory: true, guard, running, message => Console.WriteLine(message));
        ReleaseMemory();
        return result;
    }

    private static void LiveTable(Options options)
    {
        long guard = (long)(options.MinFreeGiB * (1L << 30));
        Section(
            "JVMCSP Table 3, simpler shape: live processes: pairs of async processes exchanging over two One2OneChannel<int>",
            $"Each pair: A writes to B on c1, B writes back on c2, {options.Exchanges} time(s); after the first exchange every B waits at a shared gate and\n"
            + "every A parks on its next write, so all processes are alive and parked at once. Then the gate opens and all finish.\n"
            + "Live bytes = GC.GetTotalMemory(true) while all are parked minus before creating anything (managed heap only; the full\n"
            + $"collections are not timed). Guard: stop creating when the machine's available memory drops below {options.MinFreeGiB} GiB.");

        Console.WriteLine();
        Console.WriteLine("  JVMCSP (Xeon E5-2630 v3, 128 GB, one core; processes include the par processes; memory as reported, GB):");
        PrintTable(
            ["Processes", "time s", "memory GB", "B/process"],
            s_jvmcsp.Select(r => (IReadOnlyList<string>)[N(r.Processes), N(r.Seconds, 2), N(r.Gb, 2), N(r.Gb * 1e9 / r.Processes)]));

        // Sizes of the parts, for the breakdown and for the memory estimate of big runs.
        LiveBreakdown parts = LiveBreakdown.Measure(options.Quick ? 2_000 : 20_000);

        List<long> counts = [.. options.LiveCounts];
        if (counts.Count == 0 && !options.LiveMax)
        {
            counts.Add(options.Quick ? 20_000 : 2_000_000);
        }

        var results = new List<LiveResult>();
        foreach (long count in counts)
        {
            results.Add(RunLive(count, options, guard, RunningBytesPerPair(parts)));
        }

        if (options.LiveMax)
        {
            LiveMax(options, guard, parts, results);
        }

        Console.WriteLine();
        Console.WriteLine("  CspNet (this machine):");
        PrintTable(
            ["Processes", "create s", "to parked s", "to end s", "total s", "CPU s", "GC pause s", "GCs 0/1/2", "live GiB", "B/process", "GC heap GiB", "RSS GiB", "alloc B/proc", "note"],
            results.Select(r => (IReadOnlyList<string>)[
                N(r.Processes), N(r.CreateSeconds, 2), N(r.StartToParkedSeconds, 2), N(r.ReleaseToEndSeconds, 2), N(r.TotalSeconds, 2), N(r.CpuSeconds, 2),
                N(r.GcPauseSeconds, 2), $"{r.Gen0Collections}/{r.Gen1Collections}/{r.Gen2Collections}",
                N((r.LiveBytesParked - r.LiveBytesBefore) / (double)(1L << 30), 2), N(r.BytesPerProcess, 1),
                N(r.GcHeapBytesParked / (double)(1L << 30), 2), N(r.WorkingSetParked / (double)(1L << 30), 2),
                N(r.AllocatedBytes / (double)r.Processes, 0),
                r.StoppedForMemory ? $"stopped by the memory guard (asked {N(r.ProcessesRequested)})" : "",
            ]));

        PrintBreakdown(parts, results.Count > 0 ? results[^1] : null);
        if (results.Count > 0)
        {
            Chart(options, dir => Charts.WriteLive(dir, "live-pairs.png", "Live processes (pairs) against memory", JvmcspPoints, results));
        }
        Console.WriteLine($"  Load average after: {LoadAverage()}");
    }

    private static LiveResult RunLive(long processes, Options options, long guard, double runningBytesPerPair)
    {
        Console.WriteLine($"  running {processes:N0} live processes (available memory {FormatGiB(MachineMemory.AvailableBytes())}, load {LoadAverage()})");
        LiveResult result = LivePairs.Run(processes / 2, options.Exchanges, measureMemory: true, guard, runningBytesPerPair, message => Console.WriteLine(message));
        ReleaseMemory();
        return result;
    }

    /// <summary>
    /// 10M, 20M, 40M... processes while the estimate fits in available memory minus the guard; then
    /// one more run that asks for the next step and lets the creation guard stop it at the largest
    /// count that still leaves the guard free once everything runs.
    /// </summary>
    private static void LiveMax(Options options, long guard, LiveBreakdown parts, List<LiveResult> results)
    {
        // Estimated peak bytes per process: the last measured live bytes (or the breakdown with two
        // waiters per pair), plus 25% for Parallel's transient arrays, queued work items and GC
        // headroom (a 20M-process run peaked at 1.07 times its live bytes).
        const double Headroom = 1.25;
        double perProcess = results.Count > 0 ? results[^1].BytesPerProcess : (parts.PairBytesWithoutWaiters + (2 * parts.WaiterBytes)) / 2;
        double estimate = perProcess * Headroom;
        long fitting = (long)((MachineMemory.AvailableBytes() - guard) / estimate);
        Console.WriteLine($"  --live-max: about {N(perProcess)} live B/process, {N(estimate)} B/process with headroom: {N(fitting)} processes would fit now");
        long count = 10_000_000;
        for (; count <= fitting; count *= 2)
        {
            LiveResult result = RunLive(count, options, guard, RunningBytesPerPair(parts));
            results.Add(result);
            if (result.StoppedForMemory)
            {
                return;
            }

            estimate = result.BytesPerProcess * Headroom;
            fitting = (long)((MachineMemory.AvailableBytes() - guard) / estimate);
        }

        Console.WriteLine($"  next step {N(count)} would not fit ({N(fitting)} processes estimated to fit): asking for it, the memory guard stops creation");
        results.Add(RunLive(count, options, guard, RunningBytesPerPair(parts)));
    }

    /// <summary>
    /// What a created pair still allocates once it runs (boxes, two waiters, Parallel's run state),
    /// plus 20% for transients (a 20M-process run peaked at 1.07 times its live bytes).
    /// </summary>
    private static double RunningBytesPerPair(LiveBreakdown parts) =>
        1.2 * (parts.WriterBoxBytes + parts.ReplierBoxBytes + (2 * parts.WaiterBytes) + (2 * parts.ParallelRunBytesPerProcess));

    private static void PrintBreakdown(LiveBreakdown parts, LiveResult? run)
    {
        Console.WriteLine();
        Console.WriteLine("  Live bytes per pair (2 processes), by part (each part measured alone, 20,000 of each; allocated bytes, 8-byte aligned):");
        var rows = new List<IReadOnlyList<string>>
        {
            new[] { "2 x One2OneChannel<int> (everything `new` allocates: one object since the engine is folded in)", N(2 * parts.ChannelBytes) },
            new[] { "process objects (PairWriter + PairReplier)", N(parts.WriterObjectBytes + parts.ReplierObjectBytes) },
            new[] { "Parallel slots while idle (the main parallel's array: process + task slot, with capacity growth), 2 x", N(2 * parts.ParallelEntryBytes) },
            new[] { "async state-machine boxes (writer + replier)", N(parts.WriterBoxBytes + parts.ReplierBoxBytes) },
            new[] { "Parallel per-process run cost (what a run adds: array regrowth, queue, continuation), 2 x", N(2 * parts.ParallelRunBytesPerProcess) },
            new[] { "= everything but channel waiters", N(parts.PairBytesWithoutWaiters) },
            new[] { "one AsyncWaiter<int> (kept in the channel's waiter cache for reuse; typically 2 per pair here: c1's parked writer, c2's cached one)", N(parts.WaiterBytes) },
        };
        if (run is not null && run.Units > 0)
        {
            double measured = 2 * run.BytesPerProcess;
            double waiters = measured - parts.PairBytesWithoutWaiters;
            rows.Add(new[] { $"measured live bytes per pair in the {N(run.Processes)}-process run", N(measured) });
            rows.Add(new[] { $"  of which waiters and rest (measured - parts) = {N(waiters / parts.WaiterBytes, 2)} waiters per pair", N(waiters) });
        }

        PrintTable(["Part", "bytes"], rows);
    }

    /// <summary>Returns the freed heap to the OS, so that the next run (and other programs) can use it.</summary>
    private static void ReleaseMemory()
    {
        GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
    }
}
