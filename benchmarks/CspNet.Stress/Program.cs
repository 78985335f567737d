using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Reflection;

namespace CspNet.Stress;

/// <summary>
/// Pushes 10,000,000 items (by default) through an unbuffered channel of each kind with
/// <see cref="StressRun"/>: several writers and readers as the kind allows, each switching at
/// random between blocking thread and async operations, async operations cancelled at random.
/// Every item must arrive exactly once and each writer's items in order. Exit code 0 when every
/// kind passed, 1 when one failed or hung, 2 for a usage error.
/// </summary>
internal static class Program
{
    private const string Details = """
        Per kind: 1 writer, or 3 if the writing end may be shared (Any2One, Any2Any); 1 reader, or
        3 if the reading end may be shared (One2Any, Any2Any). Each party switches between runs of
        blocking Read/Write on a thread and runs of ReadAsync/WriteAsync, whose tokens are cancelled
        at random; a cancelled operation is retried. Checked: every item arrives exactly once, each
        reader receives each writer's items in order, and some operations were cancelled. A kind
        that receives no item for 120 s counts as hung. Exit code: 0 all passed, 1 a failure, 2 usage.
        """;

    private static readonly TimeSpan StallLimit = TimeSpan.FromSeconds(120);

    private static readonly string[] AllKinds = ["One2One", "Any2One", "One2Any", "Any2Any"];

    private static Task<int> Main(string[] args)
    {
        Option<long> items = Cli.Count("--items", "Items per channel kind (suffixes k, M).", 10_000_000, 1, 1_000_000_000);
        Option<string[]> kind = Cli.List("--kind", "One2One | Any2One | One2Any | Any2Any | all, or a comma-separated list (default all).", "K", KindName);
        var seed = new Option<int?>("--seed")
        {
            Description = "Seed of the parties' random choices (default: from the clock); the timing, and so the interleaving, still differs from run to run.",
            HelpName = "S",
        };
        var root = new RootCommand("Stress test of CspNet's channels: unbuffered rendezvous under random cancellation.") { items, kind, seed };
        root.SetAction(result => RunAsync(result.GetValue(items), [.. result.GetRequiredValue(kind)], result.GetValue(seed) ?? Environment.TickCount));
        return Cli.RunAsync(root, args, Details);
    }

    private static async Task<int> RunAsync(long items, List<string> kinds, int seed)
    {
        if (kinds.Count == 0 || kinds.Contains("all"))
        {
            kinds = [.. AllKinds];
        }

        bool debugLibrary = typeof(CspChannel<>).Assembly.GetCustomAttribute<DebuggableAttribute>() is { IsJITOptimizerDisabled: true };
        Console.WriteLine($"CspNet stress: {items:N0} items per channel kind through an unbuffered channel, seed {seed}");
        Console.WriteLine($"machine: {Environment.ProcessorCount} logical processors{LoadAverage()}, .NET {Environment.Version}; CspNet "
            + (debugLibrary ? "Debug build (also checks the channel's invariants at every operation; run with -c Release for figures)" : "Release build"));
        Console.WriteLine();
        Console.WriteLine($"{"kind",-8} {"writers",7} {"readers",7} {"items",12} {"seconds",8} {"M items/s",9} {"cancellations",13}  result");

        var details = new List<string>();
        bool allPassed = true;
        foreach (string kind in kinds.Distinct())
        {
            (bool passed, bool hung, string detail) = await RunKindAsync(kind, items, seed);
            allPassed &= passed;
            details.Add($"{kind}: {detail}");
            if (hung)
            {
                break;   // the hung parties still hold the machine: the next figures would mean nothing
            }
        }

        Console.WriteLine();
        foreach (string detail in details)
        {
            Console.WriteLine(detail);
        }

        Console.WriteLine();
        Console.WriteLine(allPassed
            ? "PASS: every item arrived exactly once, each writer's in order, on every channel kind."
            : "FAIL: see above.");
        return allPassed ? 0 : 1;
    }

    private static async Task<(bool Passed, bool Hung, string Detail)> RunKindAsync(string kind, long items, int seed)
    {
        (CspChannel<int> channel, int writers, int readers) = kind switch
        {
            "One2One" => ((CspChannel<int>)new One2OneChannel<int>(), 1, 1),
            "Any2One" => (new Any2OneChannel<int>(), 3, 1),
            "One2Any" => (new One2AnyChannel<int>(), 1, 3),
            _ => (new Any2AnyChannel<int>(), 3, 3),
        };
        int itemsPerWriter = (int)((items + writers - 1) / writers);
        using var run = new StressRun(channel, writers, readers, itemsPerWriter, seed);
        string Row(double seconds, string result) =>
            $"{kind,-8} {writers,7} {readers,7} {run.TotalItems,12:N0} {seconds,8:F1} {run.TotalItems / seconds / 1e6,9:F2} {run.CancelledReads + run.CancelledWrites,13:N0}  {result}";

        var stopwatch = Stopwatch.StartNew();
        Task<TimeSpan> running = run.RunAsync();
        long lastRead = -1;
        TimeSpan lastProgress = TimeSpan.Zero;
        while (await Task.WhenAny(running, Task.Delay(500)) != running)
        {
            long read = run.ItemsRead;
            if (read != lastRead)
            {
                (lastRead, lastProgress) = (read, stopwatch.Elapsed);
            }
            else if (stopwatch.Elapsed - lastProgress > StallLimit)
            {
                Console.WriteLine(Row(stopwatch.Elapsed.TotalSeconds, "FAIL (hung)"));
                return (false, true, $"no item arrived for {StallLimit.TotalSeconds:F0} s after {read:N0} items; {run.Statistics}");
            }

            if (!Console.IsOutputRedirected)
            {
                Console.Write($"\r{kind}: {read:N0} of {run.TotalItems:N0} items, {stopwatch.Elapsed.TotalSeconds:F0} s ");
            }
        }

        if (!Console.IsOutputRedirected)
        {
            Console.Write($"\r{new string(' ', Console.WindowWidth - 1)}\r");
        }

        TimeSpan elapsed;
        try
        {
            elapsed = await running;
        }
#pragma warning disable CA1031 // Any exception from a party is a failure to report, not a crash.
        catch (Exception exception)
#pragma warning restore CA1031
        {
            Console.WriteLine(Row(stopwatch.Elapsed.TotalSeconds, "FAIL (a party threw)"));
            return (false, false, $"{exception}; {run.Statistics}");
        }

        string? failure = run.Failure();
        Console.WriteLine(Row(elapsed.TotalSeconds, failure is null ? "PASS" : "FAIL"));
        return (failure is null, false, failure ?? run.Statistics);
    }

    private static string KindName(string text) =>
        text.Equals("all", StringComparison.OrdinalIgnoreCase) ? "all"
        : AllKinds.FirstOrDefault(kind => kind.Equals(text, StringComparison.OrdinalIgnoreCase)) ?? throw new FormatException($"--kind must be One2One, Any2One, One2Any, Any2Any or all, not '{text}'.");

    private static string LoadAverage()
    {
        try
        {
            return $", load average {File.ReadAllText("/proc/loadavg").Split(' ')[0]}";
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException)
        {
            return "";
        }
    }
}
