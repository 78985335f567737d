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
using System.Diagnostics;
using System.Globalization;
using System.Reflection;

class Program
{
    const string Usage = """
        CommsTime: the occam/JCSP Prefix-Delta-Successor ring with a timing Consumer.

        Usage: dotnet run --project samples/CommsTime -- [options]

          --iterations N    iterations per timed round (default 10k; suffixes k, M)
          --rounds N        timed rounds per ring; the best is reported (default 3)
          --warm-up N       untimed iterations first (default: iterations / 10)
          --warm-up-ms T    and warm up for at least T milliseconds, so that the timed code is
                            JIT-optimised (default 100)
          --processes P     threads | async | all (default all)
          --channel C       one2one | any2one | one2any | any2any | all (default all)
          --delta D         seq (JCSP SeqDelta) | par (JCSP Delta, a PAR of two writes) | all (default seq)
          --help            show this text

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

    static int Main(string[] args)
    {
        CultureInfo.CurrentCulture = CultureInfo.InvariantCulture;

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

    public int Iterations { get; private set; } = 10_000;

    public int Rounds { get; private set; } = 3;

    public int WarmUp => warmUp ?? Math.Max(Iterations / 10, 1);

    public TimeSpan WarmUpTime { get; private set; } = TimeSpan.FromMilliseconds(100);

    /// <summary>false: thread processes; true: async processes.</summary>
    public bool[] ProcessKinds { get; private set; } = [false, true];

    public string[] Channels { get; private set; } = ["One2One", "Any2One", "One2Any", "Any2Any"];

    /// <summary>false: sequential Delta; true: parallel Delta.</summary>
    public bool[] DeltaKinds { get; private set; } = [false];

    public bool Help { get; private set; }

    public static Options Parse(string[] args)
    {
        var options = new Options();
        for (int i = 0; i < args.Length; i++)
        {
            string Value() => i + 1 < args.Length ? args[++i] : throw new FormatException($"{args[i]} needs a value.");
            switch (args[i])
            {
                case "--iterations":
                    options.Iterations = ParseCount(Value(), 1, "--iterations");
                    break;
                case "--rounds":
                    options.Rounds = ParseCount(Value(), 1, "--rounds");
                    break;
                case "--warm-up":
                    options.warmUp = ParseCount(Value(), 0, "--warm-up");
                    break;
                case "--warm-up-ms":
                    options.WarmUpTime = TimeSpan.FromMilliseconds(ParseCount(Value(), 0, "--warm-up-ms"));
                    break;
                case "--processes":
                    options.ProcessKinds = Value().ToLowerInvariant() switch
                    {
                        "threads" => [false],
                        "async" => [true],
                        "all" => [false, true],
                        string other => throw new FormatException($"--processes must be threads, async or all, not '{other}'."),
                    };
                    break;
                case "--channel":
                    string channel = Value();
                    options.Channels = channel.ToLowerInvariant() switch
                    {
                        "one2one" => ["One2One"],
                        "any2one" => ["Any2One"],
                        "one2any" => ["One2Any"],
                        "any2any" => ["Any2Any"],
                        "all" => ["One2One", "Any2One", "One2Any", "Any2Any"],
                        _ => throw new FormatException($"--channel must be one2one, any2one, one2any, any2any or all, not '{channel}'."),
                    };
                    break;
                case "--delta":
                    options.DeltaKinds = Value().ToLowerInvariant() switch
                    {
                        "seq" => [false],
                        "par" => [true],
                        "all" => [false, true],
                        string other => throw new FormatException($"--delta must be seq, par or all, not '{other}'."),
                    };
                    break;
                case "--help" or "-h" or "-?":
                    options.Help = true;
                    break;
                default:
                    throw new FormatException($"unknown option '{args[i]}'.");
            }
        }

        return options;
    }

    /// <summary>Parses 20000, 20_000, 20k or 1M.</summary>
    static int ParseCount(string text, int min, string option)
    {
        string digits = text.Replace("_", "").Replace(",", "");
        long multiplier = 1;
        if (digits.EndsWith('k') || digits.EndsWith('K'))
        {
            multiplier = 1_000;
            digits = digits[..^1];
        }
        else if (digits.EndsWith('M'))
        {
            multiplier = 1_000_000;
            digits = digits[..^1];
        }

        if (!long.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out long value)
            || value * multiplier < min || value * multiplier > int.MaxValue)
        {
            throw new FormatException($"{option} must be a whole number from {min} to {int.MaxValue:N0}; got '{text}'.");
        }

        return (int)(value * multiplier);
    }
}
