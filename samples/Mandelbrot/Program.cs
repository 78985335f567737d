// The Mandelbrot picture of the JVMCSP paper (Table 1): one process per row, or per pixel, each
// computing its part and sending it to one collector over a shared channel:
//
//   Row 0..H-1 (or Pixel 0..W*H-1) --results (Any2One)--> Collector --> PNG file
//
// Async processes by default, so that even a process per pixel is cheap; --threads runs the rows
// as thread processes instead.
//
//   dotnet run --project samples/Mandelbrot -- --help
using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Reflection;

class Program
{
    const string Examples = """
        Example, the paper's size, a process per row:
          dotnet run -c Release --project samples/Mandelbrot -- --width 4000 --height 3000
        (--per-pixel at that size holds 12 million async processes at once: about 6 GB of memory.)
        """;

    /// <summary>Thread processes beyond this would mean as many OS threads at once: use async processes.</summary>
    const int MaxThreadProcesses = 10_000;

    static int Main(string[] args) => Cli.Run(Options.Command(Run), args, Examples);

    static int Run(Options options)
    {
        var view = new View(options.Width, options.Height, options.MaxIterations);
        Console.WriteLine($"Mandelbrot {view.Width}x{view.Height}, at most {view.MaxIterations} iterations per pixel "
            + $"({Environment.ProcessorCount} logical processors{LoadAverage()})");

        WarnIfDebugLibrary();
        Variant[] variants = options.Compare
            ? [Variant.Sequential, Variant.RowsAsync, Variant.PixelsAsync, Variant.RowsThreads]
            : [options.Single];
        foreach (Variant variant in variants)
        {
            if (variant.Threads && variant.ProcessCount(view) - 1 > MaxThreadProcesses)
            {
                Console.Error.WriteLine($"error: {variant.ProcessCount(view) - 1:N0} thread processes would need as many threads at once; "
                    + $"use async processes (drop --threads) or at most {MaxThreadProcesses:N0} processes.");
                return 2;
            }
        }

        Console.WriteLine();
        Console.WriteLine($"{"version",-30} {"time (s)",9} {"#processes",12}");
        byte[]? picture = null;
        bool identical = true;
        foreach (Variant variant in variants)
        {
            var stopwatch = Stopwatch.StartNew();
            byte[] rgb = Compute(view, variant, !options.Quiet);
            TimeSpan time = stopwatch.Elapsed;
            Console.WriteLine($"{variant.Name,-30} {time.TotalSeconds,9:F3} {variant.ProcessCount(view),12:N0}");
            identical &= picture is null || picture.AsSpan().SequenceEqual(rgb);
            picture ??= rgb;
        }

        if (options.Compare)
        {
            Console.WriteLine(identical ? "All versions computed the same picture." : "ERROR: the versions computed different pictures.");
        }

        var write = Stopwatch.StartNew();
        Png.Write(options.Out, view.Width, view.Height, picture!);
        Console.WriteLine($"Wrote {Path.GetFullPath(options.Out)} ({new FileInfo(options.Out).Length / 1024.0:N0} KiB) in {write.ElapsedMilliseconds} ms.");
        return identical ? 0 : 1;
    }

    static byte[] Compute(View view, Variant variant, bool showProgress)
    {
        if (variant.IsSequential)
        {
            var rgb = new byte[view.Width * view.Height * 3];
            for (int y = 0; y < view.Height; y++)
            {
                view.Row(y, rgb.AsSpan(y * view.Width * 3, view.Width * 3));
            }

            return rgb;
        }

        var par = new Parallel();
        if (variant.PerPixel)
        {
            var collector = new Collector(view, new ProgressLine("pixels", view.Width * view.Height, showProgress));
            var pixels = new Any2OneChannel<PixelResult>();
            for (int y = 0; y < view.Height; y++)
            {
                for (int x = 0; x < view.Width; x++)
                {
                    var pixel = new PixelProcess(view, x, y, pixels);
                    if (variant.Threads)
                    {
                        par.AddProcess(pixel.Run);
                    }
                    else
                    {
                        par.AddProcess(pixel);
                    }
                }
            }

            Run(par, variant, () => collector.CollectPixels(pixels), ct => collector.CollectPixelsAsync(pixels, ct));
            return collector.Rgb;
        }
        else
        {
            var collector = new Collector(view, new ProgressLine("rows", view.Height, showProgress));
            var rows = new Any2OneChannel<RowResult>();
            for (int y = 0; y < view.Height; y++)
            {
                var row = new RowProcess(view, y, rows);
                if (variant.Threads)
                {
                    par.AddProcess(row.Run);
                }
                else
                {
                    par.AddProcess(row);
                }
            }

            Run(par, variant, () => collector.CollectRows(rows), ct => collector.CollectRowsAsync(rows, ct));
            return collector.Rgb;
        }
    }

    /// <summary>Adds the collector, of the same kind as the workers, and runs the network.</summary>
    static void Run(Parallel par, Variant variant, Action collect, Func<CancellationToken, Task> collectAsync)
    {
        if (variant.Threads)
        {
            par.AddProcess(collect);

            // Hundreds of threads computing a row each need little stack: ask for 256 KiB, not the default 8 MiB.
            using var pool = new PoolScope(new CSPThreadPool(256 * 1024));
            par.ThreadPool = pool.Pool;
            par.Run();
        }
        else
        {
            par.AddProcess(collectAsync);
            par.RunAsync().GetAwaiter().GetResult();
        }
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

/// <summary>Releases a pool's idle threads when the run is over.</summary>
sealed class PoolScope(CSPThreadPool pool) : IDisposable
{
    public CSPThreadPool Pool { get; } = pool;

    public void Dispose() => Pool.Release();
}

/// <summary>One way of computing the picture, as a row of JVMCSP's Table 1.</summary>
sealed record Variant(string Name, bool IsSequential, bool PerPixel, bool Threads)
{
    public static readonly Variant Sequential = new("sequential", true, false, false);
    public static readonly Variant RowsAsync = new("rows, async processes", false, false, false);
    public static readonly Variant PixelsAsync = new("pixels, async processes", false, true, false);
    public static readonly Variant RowsThreads = new("rows, thread processes", false, false, true);
    public static readonly Variant PixelsThreads = new("pixels, thread processes", false, true, true);

    /// <summary>Processes in the network: one per row or pixel, plus the collector. 1 for the sequential loop.</summary>
    public int ProcessCount(View view) =>
        IsSequential ? 1 : (PerPixel ? view.Width * view.Height : view.Height) + 1;
}

/// <summary>The command line.</summary>
sealed class Options
{
    public int Width { get; private init; }

    public int Height { get; private init; }

    public int MaxIterations { get; private init; }

    public string Out { get; private init; } = "";

    public bool PerPixel { get; private init; }

    public bool Threads { get; private init; }

    public bool SequentialOnly { get; private init; }

    public bool Compare { get; private init; }

    public bool Quiet { get; private init; }

    /// <summary>The version chosen by --per-pixel, --threads and --sequential.</summary>
    public Variant Single =>
        SequentialOnly ? Variant.Sequential
        : (PerPixel, Threads) switch
        {
            (false, false) => Variant.RowsAsync,
            (true, false) => Variant.PixelsAsync,
            (false, true) => Variant.RowsThreads,
            (true, true) => Variant.PixelsThreads,
        };

    /// <summary>The program's command: its options, and <paramref name="run"/> with their values.</summary>
    public static RootCommand Command(Func<Options, int> run)
    {
        Option<int> width = Cli.IntCount("--width", "Picture width in pixels.", 1200, 1, 50_000);
        Option<int> height = Cli.IntCount("--height", "Picture height in pixels.", 900, 1, 50_000);
        Option<int> maxIterations = Cli.IntCount("--max-iterations", "Iterations before a point counts as inside the set.", 1000, 1, int.MaxValue);
        var output = new Option<string>("--out") { Description = "The PNG to write.", HelpName = "FILE", DefaultValueFactory = _ => "mandelbrot.png" };
        var perPixel = new Option<bool>("--per-pixel") { Description = "One process per pixel instead of one per row." };
        var threads = new Option<bool>("--threads") { Description = "Thread processes instead of async ones (at most 10,000 processes)." };
        var sequential = new Option<bool>("--sequential") { Description = "No processes: compute the picture in one loop." };
        var compare = new Option<bool>("--compare") { Description = "Run sequential, rows and pixels (async) and rows (threads); print a table like JVMCSP's Table 1 and check that the pictures are identical." };
        var quiet = new Option<bool>("--quiet") { Description = "No progress line." };
        var root = new RootCommand("""
            Mandelbrot: one CSP process per row (or per pixel) and a collector; writes a PNG.
            After the JVMCSP paper's Table 1 (4000x3000, a process per row or per pixel).
            """)
        {
            width, height, maxIterations, output, perPixel, threads, sequential, compare, quiet,
        };
        root.SetAction(result => (long)result.GetValue(width) * result.GetValue(height) * 3 > Array.MaxLength
            ? Cli.UsageFailure($"{result.GetValue(width)}x{result.GetValue(height)} is too large for one picture in memory.")
            : run(new Options
            {
                Width = result.GetValue(width),
                Height = result.GetValue(height),
                MaxIterations = result.GetValue(maxIterations),
                Out = result.GetRequiredValue(output),
                PerPixel = result.GetValue(perPixel),
                Threads = result.GetValue(threads),
                SequentialOnly = result.GetValue(sequential),
                Compare = result.GetValue(compare),
                Quiet = result.GetValue(quiet),
            }));
        return root;
    }
}
