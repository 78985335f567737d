// Monte Carlo Pi, section 4.2 of the CSP.NET paper (listings 7 and 8): throw random points into
// a square and count those inside the circle, sequentially and split among N processes:
//
//   Worker 1..N --counts (Any2One)--> Collector        (workers start together at a Barrier)
//
// with thread processes (the paper's) and with async processes. Each mode runs several times
// after a warm-up run, and the median time is reported.
//
// --mode paper001 runs the two distributed farms of paper 001 instead (section 4.3): request-respond
// with alternation, and scatter-gather (Paper001.cs).
//
//   dotnet run --project samples/MonteCarloPi -- --help
using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Reflection;

class Program
{
    const string Examples = """
        The modes take turns (sequential, threads, async, sequential, ...), so a change in the
        machine's load affects them alike. Speedup is the sequential median over the mode's median.

        Distributed (the paper's Table 4): an embedded NameServer, two worker pool programs started
        here, and DistParallel shipping the workers to them:
          dotnet run -c Release --project samples/MonteCarloPi -- --mode dist --iterations 400M --repeat 3

        Paper 001's farms (request-respond with alternation, and scatter-gather) beside the
        sequential loop, a farmer and 4 worker nodes, the points cut into 100 packets:
          dotnet run -c Release --project samples/MonteCarloPi -- --mode paper001 --processes 4 --packets 100

        Example, the paper's Table 2 with 400 threads of 256 KiB stack:
          dotnet run -c Release --project samples/MonteCarloPi -- --iterations 1.2G --processes 400 --stack-size 256k --repeat 3
        """;

    static int Main(string[] args)
    {
        RootCommand root = Options.Command(Run);
        root.Subcommands.Add(PoolPrograms.Command()); // the hidden pool program of --mode dist
        return Cli.Run(root, args, Examples);
    }

    static int Run(Options options)
    {
        var job = new PiJob(options.Iterations, options.Seed, options.Rng);
        string rng = options.Rng == RngKind.System ? "System.Random(seed) per worker" : "xoshiro256** per worker";
        Console.WriteLine("Monte Carlo Pi (CSP.NET paper, section 4.2, listings 7 and 8)");
        Console.WriteLine($"{options.Iterations:N0} points, {options.Processes} processes, seed {options.Seed}, RNG {rng}"
            + (options.Barrier ? ", workers start together at a barrier" : ""));
        Console.WriteLine($"machine: {Environment.ProcessorCount} logical processors{LoadAverage()}; "
            + $"thread stack size: {(options.StackSize == 0 ? "runtime default" : $"{options.StackSize:N0} bytes")}");
        Console.WriteLine($"times: median of {options.Repeat} timed {Runs(options.Repeat)} of each mode, "
            + $"after {options.WarmUp} warm-up {Runs(options.WarmUp)}; the modes take turns");
        WarnIfDebugLibrary();

        using CspThreadPoolScope? pool = options.Mode is "threads" or "all" ? new CspThreadPoolScope(options.StackSize) : null;
        using Distributed? distributed = options.Mode == "dist" ? StartDistributed(options) : null;
        using Paper001? farms = options.Mode == "paper001" ? Paper001.StartAsync(job, options.Packets, options.Processes).GetAwaiter().GetResult() : null;
        var modes = new List<Mode>();
        if (options.Mode is "seq" or "all" or "dist" or "paper001")
        {
            modes.Add(new Mode("sequential", 1, () => RunSequential(job)));
        }

        if (pool is not null)
        {
            modes.Add(new Mode("threads", options.Processes, () => RunThreads(job, options.Processes, options.Barrier, pool.Pool)));
        }

        if (options.Mode is "async" or "all")
        {
            modes.Add(new Mode("async", options.Processes, () => RunAsyncProcesses(job, options.Processes, options.Barrier)));
        }

        if (farms is not null)
        {
            modes.Add(new Mode("request-respond", options.Processes, () => farms.RunRequestRespond(job)));
            modes.Add(new Mode("scatter-gather", options.Processes, () => farms.RunScatterGather(job)));
        }

        if (distributed is not null)
        {
            modes.Add(new Mode("distributed", options.DistProcesses, () => distributed.Run(job, options.DistProcesses)));
        }

        for (int run = 0; run < options.WarmUp + options.Repeat; run++)
        {
            foreach (Mode mode in modes)
            {
                (PiEstimate estimate, TimeSpan time) = mode.Run();
                if (mode.Estimate is { } first && first != estimate)
                {
                    // Every run of a mode throws the same points: anything else is a bug.
                    Console.Error.WriteLine($"error: {mode.Name} run {run + 1} counted {estimate.Inside:N0} points inside, run 1 {first.Inside:N0}.");
                    return 1;
                }

                mode.Estimate = estimate;
                if (run >= options.WarmUp)
                {
                    mode.Milliseconds.Add(time.TotalMilliseconds);
                }
            }
        }

        Console.WriteLine();
        Console.WriteLine($"{"mode",-15} {"processes",9} {"estimate",16} {"|error|",10} {"median (ms)",11} {"min..max (ms)",15} {"speedup",8}");
        double? sequentialMs = modes.Find(mode => mode.Name == "sequential")?.Median;
        foreach (Mode mode in modes)
        {
            PiEstimate estimate = mode.Estimate!.Value;
            double ms = mode.Median;
            string speedup = sequentialMs is { } seq ? (seq / ms).ToString("F2") : "-";
            string range = $"{mode.Milliseconds.Min():F0}..{mode.Milliseconds.Max():F0}";
            Console.WriteLine($"{mode.Name,-15} {mode.Processes,9} {estimate.Pi,16:F12} {estimate.Error,10:E2} {ms,11:F0} {range,15} {speedup,8}");
        }

        if (distributed is not null)
        {
            (int remote, int local) = distributed.LastPlacement;
            Console.WriteLine($"distributed: {remote} processes ran on {options.Pools} worker pool programs, {local} here (last run)");
        }

        return 0;
    }

    static string Runs(int count) => count == 1 ? "run" : "runs";

    /// <summary>One way of computing the estimate, and what its runs gave.</summary>
    sealed class Mode(string name, int processes, Func<(PiEstimate, TimeSpan)> run)
    {
        public string Name { get; } = name;

        public int Processes { get; } = processes;

        public Func<(PiEstimate Estimate, TimeSpan Time)> Run { get; } = run;

        /// <summary>The estimate of the first run; every run must give the same.</summary>
        public PiEstimate? Estimate { get; set; }

        /// <summary>The times of the timed runs.</summary>
        public List<double> Milliseconds { get; } = [];

        public double Median
        {
            get
            {
                double[] sorted = [.. Milliseconds.Order()];
                int middle = sorted.Length / 2;
                return sorted.Length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
            }
        }
    }

    /// <summary>The NameServer, the pool programs and this program's node for --mode dist.</summary>
    static Distributed StartDistributed(Options options) =>
        Distributed.StartAsync(options.Pools, options.PoolWorkers).GetAwaiter().GetResult();

    /// <summary>Listing 7: one loop, no processes.</summary>
    static (PiEstimate, TimeSpan) RunSequential(PiJob job)
    {
        var stopwatch = Stopwatch.StartNew();
        long inside = MonteCarlo.CountInside(job.Split(1)[0]);
        return (job.Merge(inside), stopwatch.Elapsed);
    }

    /// <summary>Listing 8: N thread processes and a collector in one Parallel. The time includes starting the threads.</summary>
    static (PiEstimate, TimeSpan) RunThreads(PiJob job, int processes, bool barrier, CSPThreadPool pool)
    {
        var stopwatch = Stopwatch.StartNew();
        var counts = new Any2OneChannel<long>();
        Barrier? start = barrier ? new Barrier(processes) : null;
        var collector = new Collector(counts, processes);

        var par = new Parallel { ThreadPool = pool };
        foreach (WorkItem work in job.Split(processes))
        {
            par.AddProcess(new Worker(work, counts, start));
        }

        par.AddProcess(collector);
        par.Run();
        return (job.Merge(collector.Inside), stopwatch.Elapsed);
    }

    /// <summary>The same network with async processes: no thread is held by a waiting worker.</summary>
    static (PiEstimate, TimeSpan) RunAsyncProcesses(PiJob job, int processes, bool barrier)
    {
        var stopwatch = Stopwatch.StartNew();
        var counts = new Any2OneChannel<long>();
        Barrier? start = barrier ? new Barrier(processes) : null;
        var collector = new Collector(counts, processes);

        var par = new Parallel();
        foreach (WorkItem work in job.Split(processes))
        {
            par.AddProcess(new AsyncWorker(work, counts, start));
        }

        par.AddProcess(collector.RunAsync);
        par.RunAsync().GetAwaiter().GetResult();
        return (job.Merge(collector.Inside), stopwatch.Elapsed);
    }

    /// <summary>A warning when the CspNet library was compiled without optimisation (Debug): its share of the timings is then too slow.</summary>
    static void WarnIfDebugLibrary()
    {
        if (typeof(Parallel).Assembly.GetCustomAttribute<DebuggableAttribute>() is { IsJITOptimizerDisabled: true })
        {
            Console.WriteLine("note: CspNet is a Debug build; run with -c Release for representative timings.");
        }
    }

    static string LoadAverage()
    {
        // Linux only: other programs running at the same time change the timings.
        try
        {
            string[] fields = File.ReadAllText("/proc/loadavg").Split(' ');
            return $", load average {fields[0]}";
        }
        catch (IOException)
        {
            return "";
        }
        catch (UnauthorizedAccessException)
        {
            return "";
        }
    }
}

/// <summary>The thread pool for the worker threads: the default one, or one of the requested stack size, released at the end.</summary>
sealed class CspThreadPoolScope : IDisposable
{
    public CspThreadPoolScope(int stackSize) => Pool = stackSize == 0 ? CSPThreadPool.Default : new CSPThreadPool(stackSize);

    public CSPThreadPool Pool { get; }

    public void Dispose()
    {
        if (Pool != CSPThreadPool.Default)
        {
            Pool.Release();
        }
    }
}

/// <summary>The command line.</summary>
sealed class Options
{
    public long Iterations { get; private init; }

    public int Processes { get; private init; }

    public string Mode { get; private init; } = "all";

    public int Repeat { get; private init; }

    public int WarmUp { get; private init; }

    public int StackSize { get; private init; }

    public int Seed { get; private init; }

    public RngKind Rng { get; private init; }

    public bool Barrier { get; private init; }

    public int Pools { get; private init; }

    public int Packets { get; private init; }

    private int? poolWorkers;

    /// <summary>Workers per pool: given, or the machine's processors shared among the pools.</summary>
    public int PoolWorkers => poolWorkers ?? Math.Max(1, Environment.ProcessorCount / Pools);

    /// <summary>Shipped workers in --mode dist: one per pool worker, so each runs remotely.</summary>
    public int DistProcesses => Pools * PoolWorkers;

    /// <summary>The program's command: its options, and <paramref name="run"/> with their values.</summary>
    public static RootCommand Command(Func<Options, int> run)
    {
        Option<long> iterations = Cli.Count("--iterations", "Points to throw in all, per run (suffixes k, M, G).", 20_000_000, 1, long.MaxValue);
        Option<int> processes = Cli.IntCount("--processes", "Worker processes in the parallel modes (default: processor count).", Environment.ProcessorCount, 1, 100_000);
        Option<Named<string>> mode = Cli.Choice("--mode", "The runs: all = seq, threads and async; dist = sequential against processes shipped to worker pools (see --pools); paper001 = sequential against paper 001's request-respond and scatter-gather farms (--processes worker nodes, --packets).", "all",
            ("seq", "seq"), ("sequential", "seq"), ("threads", "threads"), ("async", "async"), ("all", "all"), ("dist", "dist"), ("distributed", "dist"), ("paper001", "paper001"));
        Option<int> packets = Cli.IntCount("--packets", "paper001: the packets the points are cut into, dealt to the workers one at a time.", 100, 1, 1_000_000);
        Option<int> pools = Cli.IntCount("--pools", "dist: worker pool programs to start on this machine.", 2, 1, 26);
        Option<int?> poolWorkers = Cli.OptionalIntCount("--pool-workers", "dist: workers per pool (default: processor count / pools, at least 1).", 1, 10_000);
        Option<int> repeat = Cli.IntCount("--repeat", "Timed runs of each mode; the median is reported.", 5, 1, 1000);
        Option<int> warmUp = Cli.IntCount("--warm-up", "Untimed runs of each mode first.", 1, 0, 1000);
        Option<int> stackSize = Cli.IntCount("--stack-size", "Stack size of the worker threads, bytes (suffixes k, M; 0: the runtime's).", 0, 0, int.MaxValue, unit: 1024);
        Option<int> seed = Cli.IntCount("--seed", "Seed of the first worker; worker i uses S + i (115, as in the paper).", 115, int.MinValue, int.MaxValue);
        Option<Named<RngKind>> rng = Cli.Choice("--rng", "The random numbers: xoshiro (fast) or system (System.Random(seed), as in the paper).", "xoshiro",
            ("xoshiro", RngKind.Xoshiro), ("system", RngKind.System));
        var noBarrier = new Option<bool>("--no-barrier") { Description = "Do not make the workers wait for each other before they start." };
        var root = new RootCommand("Monte Carlo Pi: the CSP.NET paper's section 4.2 (listings 7 and 8).")
        {
            iterations, processes, mode, packets, pools, poolWorkers, repeat, warmUp, stackSize, seed, rng, noBarrier,
        };
        root.SetAction(result => result.GetValue(iterations) < result.GetValue(processes)
            ? Cli.UsageFailure("--iterations must be at least --processes.")
            : run(new Options
            {
                Iterations = result.GetValue(iterations),
                Processes = result.GetValue(processes),
                Mode = result.GetRequiredValue(mode).Value,
                Pools = result.GetValue(pools),
                Packets = result.GetValue(packets),
                poolWorkers = result.GetValue(poolWorkers),
                Repeat = result.GetValue(repeat),
                WarmUp = result.GetValue(warmUp),
                StackSize = result.GetValue(stackSize),
                Seed = result.GetValue(seed),
                Rng = result.GetRequiredValue(rng).Value,
                Barrier = !result.GetValue(noBarrier),
            }));
        return root;
    }
}
