// The Mandelbrot picture of the JVMCSP paper (Table 1): one process per row, or per pixel, each
// computing its part and sending it to one collector over a shared channel:
//
//   Row 0..H-1 (or Pixel 0..W*H-1) --results (Any2One)--> Collector --> PNG file
//
// Async processes by default, so that even a process per pixel is cheap; --threads runs the rows
// as thread processes instead.
//
//   dotnet run --project samples/Mandelbrot -- --help
using System.Diagnostics;
using System.Globalization;
using System.Reflection;

class Program
{
    const string Usage = """
        Mandelbrot: one CSP process per row (or per pixel) and a collector; writes a PNG.
        After the JVMCSP paper's Table 1 (4000x3000, a process per row or per pixel).

        Usage: dotnet run --project samples/Mandelbrot -- [options]

          --width N           picture width in pixels (default 1200)
          --height N          picture height in pixels (default 900)
          --max-iterations N  iterations before a point counts as inside the set (default 1000)
          --out FILE          the PNG to write (default mandelbrot.png)
          --per-pixel         one process per pixel instead of one per row
          --threads           thread processes instead of async ones (at most 10,000 processes)
          --sequential        no processes: compute the picture in one loop
          --compare           run sequential, rows and pixels (async) and rows (threads); print a
                              table like JVMCSP's Table 1 and check that the pictures are identical
          --quiet             no progress line
          --help              show this text

        Example, the paper's size, a process per row:
          dotnet run -c Release --project samples/Mandelbrot -- --width 4000 --height 3000
        (--per-pixel at that size holds 12 million async processes at once: about 6 GB of memory.)
        """;

    /// <summary>Thread processes beyond this would mean as many OS threads at once: use async processes.</summary>
    const int MaxThreadProcesses = 10_000;

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
    public int Width { get; private set; } = 1200;

    public int Height { get; private set; } = 900;

    public int MaxIterations { get; private set; } = 1000;

    public string Out { get; private set; } = "mandelbrot.png";

    public bool PerPixel { get; private set; }

    public bool Threads { get; private set; }

    public bool SequentialOnly { get; private set; }

    public bool Compare { get; private set; }

    public bool Quiet { get; private set; }

    public bool Help { get; private set; }

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

    public static Options Parse(string[] args)
    {
        var options = new Options();
        for (int i = 0; i < args.Length; i++)
        {
            string Value() => i + 1 < args.Length ? args[++i] : throw new FormatException($"{args[i]} needs a value.");
            switch (args[i])
            {
                case "--width":
                    options.Width = ParseInt(Value(), 1, 50_000, "--width");
                    break;
                case "--height":
                    options.Height = ParseInt(Value(), 1, 50_000, "--height");
                    break;
                case "--max-iterations":
                    options.MaxIterations = ParseInt(Value(), 1, int.MaxValue, "--max-iterations");
                    break;
                case "--out":
                    options.Out = Value();
                    break;
                case "--per-pixel":
                    options.PerPixel = true;
                    break;
                case "--threads":
                    options.Threads = true;
                    break;
                case "--sequential":
                    options.SequentialOnly = true;
                    break;
                case "--compare":
                    options.Compare = true;
                    break;
                case "--quiet":
                    options.Quiet = true;
                    break;
                case "--help" or "-h" or "-?":
                    options.Help = true;
                    break;
                default:
                    throw new FormatException($"unknown option '{args[i]}'.");
            }
        }

        if ((long)options.Width * options.Height * 3 > Array.MaxLength)
        {
            throw new FormatException($"{options.Width}x{options.Height} is too large for one picture in memory.");
        }

        return options;
    }

    static int ParseInt(string text, int min, int max, string option) =>
        int.TryParse(text.Replace("_", ""), NumberStyles.None, CultureInfo.InvariantCulture, out int value) && value >= min && value <= max
            ? value
            : throw new FormatException($"{option} must be a whole number from {min:N0} to {max:N0}; got '{text}'.");
}
