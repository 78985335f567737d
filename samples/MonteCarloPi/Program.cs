// Monte Carlo Pi, section 4.2 of the CSP.NET paper (listings 7 and 8): throw random points into
// a square and count those inside the circle, sequentially and split among N processes:
//
//   Worker 1..N --counts (Any2One)--> Collector        (workers start together at a Barrier)
//
// with thread processes (the paper's) and with async processes. Each mode runs several times
// after a warm-up run, and the median time is reported.
//
//   dotnet run --project samples/MonteCarloPi -- --help
using System.Diagnostics;
using System.Globalization;
using System.Reflection;

class Program
{
    const string Usage = """
        Monte Carlo Pi: the CSP.NET paper's section 4.2 (listings 7 and 8).

        Usage: dotnet run --project samples/MonteCarloPi -- [options]

          --iterations N    points to throw in all, per run (default 20M; suffixes k, M, G)
          --processes N     worker processes in the parallel modes (default: processor count)
          --mode M          seq | threads | async | all (default all) | dist (sequential against
                            processes shipped to worker pools; see --pools)
          --pools N         dist: worker pool programs to start on this machine (default 2)
          --pool-workers N  dist: workers per pool (default: processor count / pools, at least 1)
          --repeat N        timed runs of each mode; the median is reported (default 5)
          --warm-up N       untimed runs of each mode first (default 1)
          --stack-size B    stack size of the worker threads, bytes (suffixes k, M; default: runtime's)
          --seed S          seed of the first worker; worker i uses S + i (default 115, as in the paper)
          --rng R           xoshiro (default, fast) | system (System.Random(seed), as in the paper)
          --no-barrier      do not make the workers wait for each other before they start
          --help            show this text

        The modes take turns (sequential, threads, async, sequential, ...), so a change in the
        machine's load affects them alike. Speedup is the sequential median over the mode's median.

        Distributed (the paper's Table 4): an embedded NameServer, two worker pool programs started
        here, and DistParallel shipping the workers to them:
          dotnet run -c Release --project samples/MonteCarloPi -- --mode dist --iterations 400M --repeat 3

        Example, the paper's Table 2 with 400 threads of 256 KiB stack:
          dotnet run -c Release --project samples/MonteCarloPi -- --iterations 1.2G --processes 400 --stack-size 256k --repeat 3
        """;

    static int Main(string[] args)
    {
        CultureInfo.CurrentCulture = CultureInfo.InvariantCulture;
        if (args is ["pool", string nameServer, string name, string workers, ..var parent])
        {
            // A worker pool program started by --mode dist.
            return PoolPrograms.RunAsync(new Uri(nameServer), name, int.Parse(workers, CultureInfo.InvariantCulture),
                parent is [string pid] ? int.Parse(pid, CultureInfo.InvariantCulture) : null).GetAwaiter().GetResult();
        }

        Options options;
        try
        {
            options = Options.Parse(args);
        }
        catch (FormatException e)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            Console.Error.WriteLine("Run with --help for the options.");
            return 2;
        }

        if (options.Help)
        {
            Console.WriteLine(Usage);
            return 0;
        }

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
        var modes = new List<Mode>();
        if (options.Mode is "seq" or "all" or "dist")
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
        Console.WriteLine($"{"mode",-11} {"processes",9} {"estimate",16} {"|error|",10} {"median (ms)",11} {"min..max (ms)",15} {"speedup",8}");
        double? sequentialMs = modes.Find(mode => mode.Name == "sequential")?.Median;
        foreach (Mode mode in modes)
        {
            PiEstimate estimate = mode.Estimate!.Value;
            double ms = mode.Median;
            string speedup = sequentialMs is { } seq ? (seq / ms).ToString("F2") : "-";
            string range = $"{mode.Milliseconds.Min():F0}..{mode.Milliseconds.Max():F0}";
            Console.WriteLine($"{mode.Name,-11} {mode.Processes,9} {estimate.Pi,16:F12} {estimate.Error,10:E2} {ms,11:F0} {range,15} {speedup,8}");
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
    public long Iterations { get; private set; } = 20_000_000;

    public int Processes { get; private set; } = Environment.ProcessorCount;

    public string Mode { get; private set; } = "all";

    public int Repeat { get; private set; } = 5;

    public int WarmUp { get; private set; } = 1;

    public int StackSize { get; private set; }

    public int Seed { get; private set; } = 115;

    public RngKind Rng { get; private set; } = RngKind.Xoshiro;

    public bool Barrier { get; private set; } = true;

    public bool Help { get; private set; }

    public int Pools { get; private set; } = 2;

    private int? poolWorkers;

    /// <summary>Workers per pool: given, or the machine's processors shared among the pools.</summary>
    public int PoolWorkers => poolWorkers ?? Math.Max(1, Environment.ProcessorCount / Pools);

    /// <summary>Shipped workers in --mode dist: one per pool worker, so each runs remotely.</summary>
    public int DistProcesses => Pools * PoolWorkers;

    public static Options Parse(string[] args)
    {
        var options = new Options();
        for (int i = 0; i < args.Length; i++)
        {
            string Value() => i + 1 < args.Length ? args[++i] : throw new FormatException($"{args[i]} needs a value.");
            switch (args[i])
            {
                case "--iterations":
                    options.Iterations = Number.Parse(Value(), 1000, 1, long.MaxValue, "--iterations");
                    break;
                case "--processes":
                    options.Processes = (int)Number.Parse(Value(), 1000, 1, 100_000, "--processes");
                    break;
                case "--mode":
                    options.Mode = Value() switch
                    {
                        "seq" or "sequential" => "seq",
                        "threads" => "threads",
                        "async" => "async",
                        "all" => "all",
                        "dist" or "distributed" => "dist",
                        string other => throw new FormatException($"--mode must be seq, threads, async, all or dist, not '{other}'."),
                    };
                    break;
                case "--repeat":
                    options.Repeat = (int)Number.Parse(Value(), 1000, 1, 1000, "--repeat");
                    break;
                case "--warm-up":
                    options.WarmUp = (int)Number.Parse(Value(), 1000, 0, 1000, "--warm-up");
                    break;
                case "--stack-size":
                    options.StackSize = (int)Number.Parse(Value(), 1024, 0, int.MaxValue, "--stack-size");
                    break;
                case "--seed":
                    options.Seed = (int)Number.Parse(Value(), 1000, int.MinValue, int.MaxValue, "--seed");
                    break;
                case "--rng":
                    options.Rng = Value() switch
                    {
                        "xoshiro" => RngKind.Xoshiro,
                        "system" => RngKind.System,
                        string other => throw new FormatException($"--rng must be xoshiro or system, not '{other}'."),
                    };
                    break;
                case "--pools":
                    options.Pools = (int)Number.Parse(Value(), 1000, 1, 26, "--pools");
                    break;
                case "--pool-workers":
                    options.poolWorkers = (int)Number.Parse(Value(), 1000, 1, 10_000, "--pool-workers");
                    break;
                case "--no-barrier":
                    options.Barrier = false;
                    break;
                case "--help" or "-h" or "-?":
                    options.Help = true;
                    break;
                default:
                    throw new FormatException($"unknown option '{args[i]}'.");
            }
        }

        if (options.Iterations < options.Processes)
        {
            throw new FormatException("--iterations must be at least --processes.");
        }

        return options;
    }
}

/// <summary>Parses counts such as 300000000, 300_000_000, 300M or 1.2G (k, M, G: powers of 1000 or of 1024).</summary>
static class Number
{
    public static long Parse(string text, int unit, long min, long max, string option)
    {
        string digits = text.Replace("_", "").Replace(",", "");
        double multiplier = 1;
        if (digits.Length > 0 && char.IsLetter(digits[^1]))
        {
            multiplier = char.ToUpperInvariant(digits[^1]) switch
            {
                'K' => unit,
                'M' => (double)unit * unit,
                'G' => (double)unit * unit * unit,
                _ => throw new FormatException($"{option}: unknown suffix in '{text}' (use k, M or G)."),
            };
            digits = digits[..^1];
        }

        if (!double.TryParse(digits, NumberStyles.Float, CultureInfo.InvariantCulture, out double value))
        {
            throw new FormatException($"{option}: '{text}' is not a number.");
        }

        double result = Math.Round(value * multiplier);
        if (result < min || result > max)
        {
            throw new FormatException($"{option} must be between {min:N0} and {max:N0}; got {text}.");
        }

        return (long)result;
    }
}
