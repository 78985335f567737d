// CommsTime, the classic occam/JCSP benchmark of channel communication:
//
//        +--- a --> Delta --- d --> Consumer
//        |            |
//     Prefix(0)       b
//        ^            |
//        +--- c --- Successor
//
// Prefix outputs 0, then copies; Delta copies each value to the Consumer and to Successor, which
// adds 1. So the numbers 0, 1, 2, ... go round the ring, 4 communications per iteration. The
// Consumer times rounds of reads, then poisons its channel and the ring shuts down.
//
//   dotnet run --project samples/CommsTime -- --help
using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Reflection;

class Program
{
    const string Examples = """
        Example: dotnet run -c Release --project samples/CommsTime -- --iterations 1M --processes async
        """;

    static readonly (string Name, Func<CspChannel<int>> Create)[] ChannelKinds =
    [
        ("One2One", () => new One2OneChannel<int>()),
        ("Any2One", () => new Any2OneChannel<int>()),
        ("One2Any", () => new One2AnyChannel<int>()),
        ("Any2Any", () => new Any2AnyChannel<int>()),
    ];

    // JVMCSP's Table 2 reports 8.30 us / iteration and 0.69 us / context switch (7.52 and 0.63 on
    // Linux): 12 context switches per iteration. JCSP's Consume divides by 8.
    const int ContextSwitchesPerIteration = 12;
    const int CommunicationsPerIteration = 4;

    static int Main(string[] args) => Cli.Run(Options.Command(Run), args, Examples);

    static int Run(Options options)
    {
        Console.WriteLine("CommsTime (occam/JCSP): Prefix -> Delta -> Successor -> Prefix, Delta -> Consumer");
        Console.WriteLine($"{options.Iterations:N0} iterations per round, best of {options.Rounds} rounds after at least {options.WarmUp:N0} warm-up iterations and {options.WarmUpTime.TotalMilliseconds} ms");
        Console.WriteLine($"machine: {Environment.ProcessorCount} logical processors{LoadAverage()}");
        WarnIfDebugLibrary();
        Console.WriteLine();
        Console.WriteLine($"{"processes",-9}  {"channel",-7}  {"delta",-5}  {"us/iteration",12}  {"us/communication",16}  {"us/context switch",17}  {"mean us/iteration",17}");

        bool allInOrder = true;
        foreach (bool asyncProcesses in options.ProcessKinds)
        {
            foreach ((string name, Func<CspChannel<int>> create) in ChannelKinds.Where(k => options.Channels.Contains(k.Name, StringComparer.OrdinalIgnoreCase)))
            {
                foreach (bool parallelDelta in options.DeltaKinds)
                {
                    Consumer consumer = RunRing(create, asyncProcesses, parallelDelta, options);
                    allInOrder &= consumer.InOrder;

                    double best = consumer.RoundTimes.Min(t => t.TotalMicroseconds) / options.Iterations;
                    double mean = consumer.RoundTimes.Average(t => t.TotalMicroseconds) / options.Iterations;
                    Console.WriteLine($"{(asyncProcesses ? "async" : "threads"),-9}  {name,-7}  {(parallelDelta ? "par" : "seq"),-5}  "
                        + $"{best,12:F3}  {best / CommunicationsPerIteration,16:F3}  {best / ContextSwitchesPerIteration,17:F3}  {mean,17:F3}"
                        + (consumer.InOrder ? "" : "  NUMBERS OUT OF ORDER"));
                }
            }
        }

        Console.WriteLine();
        Console.WriteLine($"us/communication = us/iteration / {CommunicationsPerIteration}; us/context switch = us/iteration / {ContextSwitchesPerIteration}, "
            + "as in JVMCSP's Table 2 (JCSP's CommsTime divides by 8).");
        Console.WriteLine("JVMCSP for comparison (paper 004, Table 2, AMD/Linux): 7.52 us/iteration, 1.88 us/communication, 0.63 us/context switch.");
        Console.WriteLine(allInOrder
            ? "Every ring delivered its numbers in order and ended by poison."
            : "ERROR: some ring delivered numbers out of order.");
        return allInOrder ? 0 : 1;
    }

    /// <summary>Builds one ring on four channels of one kind, runs it until the Consumer is done and the poison has gone round.</summary>
    static Consumer RunRing(Func<CspChannel<int>> createChannel, bool asyncProcesses, bool parallelDelta, Options options)
    {
        CspChannel<int> a = createChannel(), b = createChannel(), c = createChannel(), d = createChannel();
        var prefix = new Prefix(0, c, a);
        var delta = new Delta(a, d, b, parallelDelta);
        var successor = new Successor(b, c);
        var consumer = new Consumer(d, options.WarmUp, options.WarmUpTime, options.Iterations, options.Rounds);

        var par = new Parallel();
        if (asyncProcesses)
        {
            par.AddProcess(prefix.RunAsync);
            par.AddProcess(delta.RunAsync);
            par.AddProcess(successor.RunAsync);
            par.AddProcess(consumer.RunAsync);
            par.RunAsync().GetAwaiter().GetResult();
        }
        else
        {
            par.AddProcess(prefix);
            par.AddProcess(delta);
            par.AddProcess(successor);
            par.AddProcess(consumer);
            par.Run();
        }

        return consumer;
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
            return $", load average {File.ReadAllText("/proc/loadavg").Split(' ')[0]}";
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

/// <summary>The command line.</summary>
sealed class Options
{
    private int? warmUp;

    public int Iterations { get; private init; }

    public int Rounds { get; private init; }

    public int WarmUp => warmUp ?? Math.Max(Iterations / 10, 1);

    public TimeSpan WarmUpTime { get; private init; }

    /// <summary>false: thread processes; true: async processes.</summary>
    public bool[] ProcessKinds { get; private init; } = [];

    public string[] Channels { get; private init; } = [];

    /// <summary>false: sequential Delta; true: parallel Delta.</summary>
    public bool[] DeltaKinds { get; private init; } = [];

    /// <summary>The program's command: its options, and <paramref name="run"/> with their values.</summary>
    public static RootCommand Command(Func<Options, int> run)
    {
        Option<int> iterations = Cli.IntCount("--iterations", "Iterations per timed round (suffixes k, M).", 10_000, 1, int.MaxValue);
        Option<int> rounds = Cli.IntCount("--rounds", "Timed rounds per ring; the best is reported.", 3, 1, int.MaxValue);
        Option<int?> warmUp = Cli.OptionalIntCount("--warm-up", "Untimed iterations first (default: iterations / 10).", 0, int.MaxValue);
        Option<int> warmUpMs = Cli.IntCount("--warm-up-ms", "And warm up for at least this many milliseconds, so that the timed code is JIT-optimised.", 100, 0, int.MaxValue);
        Option<Named<bool[]>> processes = Cli.Choice<bool[]>("--processes", "Thread processes, async processes or both.", "all",
            ("threads", [false]), ("async", [true]), ("all", [false, true]));
        Option<Named<string[]>> channel = Cli.Choice<string[]>("--channel", "The channel kinds to time.", "all",
            ("one2one", ["One2One"]), ("any2one", ["Any2One"]), ("one2any", ["One2Any"]), ("any2any", ["Any2Any"]), ("all", ["One2One", "Any2One", "One2Any", "Any2Any"]));
        Option<Named<bool[]>> delta = Cli.Choice<bool[]>("--delta", "seq: JCSP SeqDelta; par: JCSP Delta, a PAR of two writes.", "seq",
            ("seq", [false]), ("par", [true]), ("all", [false, true]));
        var root = new RootCommand("CommsTime: the occam/JCSP Prefix-Delta-Successor ring with a timing Consumer.")
        {
            iterations, rounds, warmUp, warmUpMs, processes, channel, delta,
        };
        root.SetAction(result => run(new Options
        {
            Iterations = result.GetValue(iterations),
            Rounds = result.GetValue(rounds),
            warmUp = result.GetValue(warmUp),
            WarmUpTime = TimeSpan.FromMilliseconds(result.GetValue(warmUpMs)),
            ProcessKinds = result.GetRequiredValue(processes).Value,
            Channels = result.GetRequiredValue(channel).Value,
            DeltaKinds = result.GetRequiredValue(delta).Value,
        }));
        return root;
    }
}
