using System.CommandLine;

namespace CspNet.PaperTables;

/// <summary>Command-line options; see README.md and <see cref="Command"/> (--help).</summary>
internal sealed class Options
{
    internal bool Quick { get; private init; }

    internal bool Full { get; private init; }

    /// <summary>Run the distributed tables (Distributed/) instead of the local ones.</summary>
    internal bool Distributed { get; private init; }

    internal HashSet<string> Only { get; private init; } = new(StringComparer.OrdinalIgnoreCase);

    internal int? Repetitions { get; private init; }

    internal List<long> LiveCounts { get; private init; } = [];

    internal bool LiveMax { get; private init; }

    internal double MinFreeGiB { get; private init; }

    internal int Exchanges { get; private init; }

    internal List<long> JvmcspCounts { get; private init; } = [];

    internal bool JvmcspMax { get; private init; }

    internal long CensusIterations { get; private init; }

    /// <summary>Folder for PNG charts of the tables that ran, or null for none.</summary>
    internal string? ChartsDirectory { get; private init; }

    internal int Reps => Repetitions ?? (Quick ? 1 : 5);

    internal bool Runs(string table) => Only.Count == 0 || Only.Contains(table);

    /// <summary>The program's command: its options, and <paramref name="run"/> with their values.</summary>
    internal static RootCommand Command(Func<Options, int> run)
    {
        var quick = new Option<bool>("--quick") { Description = "Smoke mode: tiny sizes, one repetition (under 20 s)." };
        var full = new Option<bool>("--full") { Description = "The papers' sizes: 500,000 integers per Table 1 run, Table 2 at 1,200,000,000 iterations, Table 3 up to 400,000,000 (tens of minutes)." };
        Option<string[]> only = Cli.List("--only", "Tables to run, comma separated (default: all); with --distributed: d-ping,d-size,d-bcast,d-pi,d-mandel,d-ring.", "t1,t2,t3,comms,jvmcsp,live", table => table);
        var distributed = new Option<bool>("--distributed") { Description = "The networking papers' tables (ping-pong, throughput, broadcast, Monte Carlo pi, Mandelbrot, token ring) with every party a separate OS program on 127.0.0.1, instead of the local tables (a few minutes)." };
        Option<int?> reps = Cli.OptionalIntCount("--reps", "Timed repetitions per measurement (default 5; quick 1).", 1, 100_000);
        Option<long[]> live = Cli.List("--live", "Live-process counts to run (processes, 2 per pair; suffixes K, M, G), e.g. --live 10M or --live 10M,20M (default 2M; quick 20K).",
            "N[,N...]", count => ParseCount(count, "--live"));
        var liveMax = new Option<bool>("--live-max") { Description = "Run 10M, 20M, 40M, ... live processes while they fit in memory, then the largest count that fits (machine available memory minus a guard)." };
        var minFreeGiB = new Option<double>("--min-free-gib")
        {
            Description = "Memory guard of the live test: stop creating processes when the machine's available memory falls below G GiB.",
            HelpName = "G",
            DefaultValueFactory = _ => 3,
        };
        Option<int> exchanges = Cli.IntCount("--exchanges", "Round trips per live pair (the gate sits after the first).", 2, 1, 1_000_000);
        Option<long[]> jvmcsp = Cli.List("--jvmcsp", "JVMCSP's own program at these JVMCSP-counted process counts (7 per iteration + main; suffixes K, M, G): default 7M,10.5M,14M (quick: 70K).",
            "N[,N...]", count => ParseCount(count, "--jvmcsp"));
        var jvmcspMax = new Option<bool>("--jvmcsp-max") { Description = "Also run JVMCSP's program at the largest count that fits in memory." };
        Option<long> census = Cli.Count("--census", "Per-type allocation census of JVMCSP's program at N iterations (GC allocation-tick events), by phase: creation, start to parked (0: none).",
            0, 2, long.MaxValue);
        var charts = new Option<string?>("--charts")
        {
            Description = "Also write PNG charts of the tables that ran (t1, comms, jvmcsp, live) into folder DIR (created if missing).",
            HelpName = "DIR",
        };
        var root = new RootCommand("Reproduces the tables of CSP.NET (CPA 2006) and JVMCSP (CPA 2016) with CspNet.")
        {
            quick, full, distributed, only, reps, live, liveMax, minFreeGiB, exchanges, jvmcsp, jvmcspMax, census, charts,
        };
        root.SetAction(result => result.GetValue(quick) && result.GetValue(full)
            ? Cli.UsageFailure("--quick and --full exclude each other.")
            : run(new Options
            {
                Quick = result.GetValue(quick),
                Full = result.GetValue(full),
                Distributed = result.GetValue(distributed),
                Only = new HashSet<string>(result.GetRequiredValue(only), StringComparer.OrdinalIgnoreCase),
                Repetitions = result.GetValue(reps),
                LiveCounts = [.. result.GetRequiredValue(live)],
                LiveMax = result.GetValue(liveMax),
                MinFreeGiB = result.GetValue(minFreeGiB),
                Exchanges = result.GetValue(exchanges),
                // 7M means JVMCSP's 7,000,001 (7 per iteration plus main).
                JvmcspCounts = [.. result.GetRequiredValue(jvmcsp).Select(processes => processes % 7 == 0 ? processes + 1 : processes)],
                JvmcspMax = result.GetValue(jvmcspMax),
                CensusIterations = result.GetValue(census),
                ChartsDirectory = result.GetValue(charts),
            }));
        return root;
    }

    /// <summary>Parses 20000, 20_000, 20,000 (alone), 20K, 10M, 1.5G: a process count, at least 2.</summary>
    private static long ParseCount(string text, string option) => Cli.ParseCount(text, 1000, 2, long.MaxValue, option);
}
