using System.Globalization;

namespace CspNet.PaperTables;

/// <summary>Command-line options; see README.md and <see cref="Usage"/>.</summary>
internal sealed class Options
{
    internal const string Usage = """
        Reproduces the tables of CSP.NET (CPA 2006) and JVMCSP (CPA 2016) with CspNet.

        dotnet run -c Release --project benchmarks/CspNet.PaperTables -- [options]

          --quick              smoke mode: tiny sizes, one repetition (under 20 s)
          --full               the papers' sizes: 500,000 integers per Table 1 run, Table 2 at
                               1,200,000,000 iterations, Table 3 up to 400,000,000 (tens of minutes)
          --only LIST          tables to run, comma separated: t1,t2,t3,comms,jvmcsp,live (default: all)
          --reps N             timed repetitions per measurement (default 5; quick 1)
          --live N[,N...]      live-process counts to run (processes, 2 per pair; suffixes K, M, G),
                               e.g. --live 10M or --live 10M,20M (default 2M; quick 20K)
          --live-max           run 10M, 20M, 40M, ... live processes while they fit in memory, then
                               the largest count that fits (machine available memory minus a guard)
          --min-free-gib G     memory guard of the live test: stop creating processes when the
                               machine's available memory falls below G GiB (default 3)
          --exchanges K        round trips per live pair (default 2; the gate sits after the first)
          --jvmcsp N[,N...]    JVMCSP's own program at these JVMCSP-counted process counts (7 per iteration
                               + main; suffixes K, M, G): default 7M,10.5M,14M (quick: 70K)
          --jvmcsp-max         also run JVMCSP's program at the largest count that fits in memory
          --census N           per-type allocation census of JVMCSP's program at N iterations (GC
                               allocation-tick events), by phase: creation, start to parked
          --help               this text
        """;

    internal bool Quick { get; private set; }

    internal bool Full { get; private set; }

    internal HashSet<string> Only { get; } = new(StringComparer.OrdinalIgnoreCase);

    internal int? Repetitions { get; private set; }

    internal List<long> LiveCounts { get; } = [];

    internal bool LiveMax { get; private set; }

    internal double MinFreeGiB { get; private set; } = 3;

    internal int Exchanges { get; private set; } = 2;

    internal List<long> JvmcspCounts { get; } = [];

    internal bool JvmcspMax { get; private set; }

    internal long CensusIterations { get; private set; }

    internal bool Help { get; private set; }

    internal int Reps => Repetitions ?? (Quick ? 1 : 5);

    internal bool Runs(string table) => Only.Count == 0 || Only.Contains(table);

    internal static Options Parse(string[] args)
    {
        var options = new Options();
        for (int i = 0; i < args.Length; i++)
        {
            string arg = args[i];
            string Next() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{arg} needs a value.");
            switch (arg)
            {
                case "--quick":
                    options.Quick = true;
                    break;
                case "--full":
                    options.Full = true;
                    break;
                case "--only":
                    foreach (string table in Next().Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
                    {
                        options.Only.Add(table);
                    }

                    break;
                case "--reps":
                    options.Repetitions = int.Parse(Next(), CultureInfo.InvariantCulture);
                    break;
                case "--live":
                    foreach (string count in Next().Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
                    {
                        options.LiveCounts.Add(ParseCount(count));
                    }

                    break;
                case "--live-max":
                    options.LiveMax = true;
                    break;
                case "--min-free-gib":
                    options.MinFreeGiB = double.Parse(Next(), CultureInfo.InvariantCulture);
                    break;
                case "--exchanges":
                    options.Exchanges = int.Parse(Next(), CultureInfo.InvariantCulture);
                    break;
                case "--jvmcsp":
                    foreach (string count in Next().Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
                    {
                        // 7M means JVMCSP's 7,000,001 (7 per iteration plus main).
                        long processes = ParseCount(count);
                        options.JvmcspCounts.Add(processes % 7 == 0 ? processes + 1 : processes);
                    }

                    break;
                case "--jvmcsp-max":
                    options.JvmcspMax = true;
                    break;
                case "--census":
                    options.CensusIterations = ParseCount(Next());
                    break;
                case "--help" or "-h" or "-?":
                    options.Help = true;
                    break;
                default:
                    throw new ArgumentException($"Unknown option '{arg}'.");
            }
        }

        if (options.Quick && options.Full)
        {
            throw new ArgumentException("--quick and --full exclude each other.");
        }

        if (options.Reps < 1 || options.Exchanges < 1)
        {
            throw new ArgumentException("--reps and --exchanges must be at least 1.");
        }

        return options;
    }

    /// <summary>Parses 20000, 20_000, 20,000, 20K, 10M, 1.5G.</summary>
    internal static long ParseCount(string text)
    {
        text = text.Replace("_", "", StringComparison.Ordinal).Replace(",", "", StringComparison.Ordinal).Trim();
        double factor = 1;
        if (text.Length > 0 && char.IsLetter(text[^1]))
        {
            factor = char.ToUpperInvariant(text[^1]) switch
            {
                'K' => 1e3,
                'M' => 1e6,
                'G' => 1e9,
                _ => throw new ArgumentException($"Unknown suffix in '{text}'."),
            };
            text = text[..^1];
        }

        long count = (long)Math.Round(double.Parse(text, CultureInfo.InvariantCulture) * factor);
        return count >= 2 ? count : throw new ArgumentException("A live-process count must be at least 2.");
    }
}
