using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using System.Text.RegularExpressions;
using CspNet.Benchmarks.Papers;
using static CspNet.PaperTables.Harness;

namespace CspNet.PaperTables;

/// <summary>
/// Per-object-type census of JVMCSP's program: what each phase allocates, by type and by owner,
/// from the runtime's GC allocation-tick events (one event per about 100 KB allocated, carrying the
/// type of the object that crossed the mark, its size and the bytes allocated since the last
/// event). Summing those bytes by type estimates allocated bytes per type without bias; the
/// relative error of a type is about 1/sqrt(its events). Object sizes come from the events too.
/// </summary>
internal static partial class Census
{
    internal static void Print(long iterations)
    {
        Console.WriteLine();
        Console.WriteLine($"Census: JVMCSP's program at {N(iterations)} iterations, allocated bytes per iteration by object type and phase");
        Console.WriteLine("  (GC AllocationTick events through an EventListener; sampled, so small entries are approximate)");
        Console.WriteLine($"  Load average before: {LoadAverage()}");

        var phases = new List<(string Name, DateTime End)>();
        using var listener = new AllocationListener();
        DateTime start = DateTime.UtcNow;
        LiveResult result = JvmcspProgram.Run(iterations, measureMemory: true, log: message =>
        {
            // LiveRunner logs once at the end of each phase: creation, start to parked, release to end.
            string name = phases.Count switch { 0 => "create", 1 => "start to parked", _ => "release to end" };
            phases.Add((name, DateTime.UtcNow));
        });

        // Runtime events reach an EventListener through a dispatch thread, about once a second.
        listener.WaitForQuiet();
        long liveBytes = result.LiveBytesParked - result.LiveBytesBefore;
        Console.WriteLine($"  live while parked: {N(liveBytes / (double)iterations)} B per iteration (created: {N((result.LiveBytesCreated - result.LiveBytesBefore) / (double)iterations)}); allocated in all: {N(result.AllocatedBytes / (double)iterations)} B per iteration");

        DateTime previous = start;
        foreach ((string name, DateTime end) in phases)
        {
            DateTime from = previous;
            List<AllocationSample> samples = [.. listener.Samples.Where(s => s.Time >= from && s.Time < end)];
            previous = end;
            PrintPhase(name, samples, iterations);
        }

        Console.WriteLine($"  Load average after: {LoadAverage()}");
    }

    private static void PrintPhase(string phase, List<AllocationSample> samples, long iterations)
    {
        Console.WriteLine();
        Console.WriteLine($"  Phase: {phase} ({N(samples.Count)} samples)");
        var byType = samples
            .GroupBy(s => s.TypeName)
            .Select(g => (Type: g.Key, Bytes: g.Sum(s => (double)s.Amount) / iterations, Size: g.Max(s => s.ObjectSize), Samples: g.Count(), Owner: OwnerOf(g.Key)))
            .Where(t => t.Bytes >= 0.5)
            .OrderByDescending(t => t.Bytes)
            .ToList();
        PrintTable(
            ["Type", "owner", "object B", "B/iteration", "~objects/iter", "samples"],
            byType.Select(t => (IReadOnlyList<string>)[
                ShortName(t.Type), t.Owner, N(t.Size), N(t.Bytes, 1),
                t.Type.EndsWith(']') && t.Type.Contains("[]", StringComparison.Ordinal) ? "-" : N(t.Bytes / Math.Max(1, t.Size), 2),
                N(t.Samples),
            ]));
        Console.WriteLine();
        PrintTable(
            ["Owner", "B/iteration"],
            byType.GroupBy(t => t.Owner).OrderByDescending(g => g.Sum(t => t.Bytes))
                .Select(g => (IReadOnlyList<string>)[g.Key, N(g.Sum(t => t.Bytes), 1)])
                .Append(["total", N(byType.Sum(t => t.Bytes), 1)]));
    }

    /// <summary>Who the census charges an object to (by type name).</summary>
    internal static string OwnerOf(string type) => type switch
    {
        _ when type.Contains("JvmcspRead+<", StringComparison.Ordinal) || type.Contains("JvmcspWrite+<", StringComparison.Ordinal) => "async boxes (user processes)",
        _ when type.Contains("AsyncStateMachineBox", StringComparison.Ordinal) => "async boxes (CspNet)",
        _ when type.Contains("JvmcspRead", StringComparison.Ordinal) || type.Contains("JvmcspWrite", StringComparison.Ordinal) => "process objects",
        _ when type.Contains("AsyncWaiter", StringComparison.Ordinal) => "waiters",
        _ when type.Contains("ChannelReadEnd", StringComparison.Ordinal) || type.Contains("ChannelWriteEnd", StringComparison.Ordinal) => "ends",
        _ when type.Contains("Channel", StringComparison.Ordinal) || type == "System.Threading.Lock" => "channels",
        // Nested types arrive under their own name only (Entry[], <>c__DisplayClass20_1): those of Parallel are listed.
        _ when type.Contains("Parallel", StringComparison.Ordinal) || type.Contains("ExecutionContext", StringComparison.Ordinal)
            || type is "Entry[]" or "AsyncProcessStart" or "System.Boolean" || type.StartsWith("<>c__DisplayClass", StringComparison.Ordinal)
            || type.StartsWith("ProcessRunner", StringComparison.Ordinal) || type.Contains("List`1[System.Exception]", StringComparison.Ordinal)
            || type.Contains("AsyncLocal", StringComparison.Ordinal) || type.Contains("TaskCompletionSource", StringComparison.Ordinal) => "Parallel bookkeeping",
        _ when type.StartsWith("System.Threading.Tasks.Task", StringComparison.Ordinal) => "Parallel bookkeeping",
        _ when type == "System.Object[]" => "Parallel items (+ gate list)",
        _ when type == "System.Action" => "Parallel bookkeeping",
        _ when type.Contains("LiveGate", StringComparison.Ordinal) => "gate / harness",
        _ when type.Contains("ThreadPool", StringComparison.Ordinal) || type.Contains("Concurrent", StringComparison.Ordinal)
            || type.StartsWith("Slot[System.Object]", StringComparison.Ordinal) => "thread-pool queue",
        _ => "other",
    };

    private static string ShortName(string type)
    {
        string name = CompilerNoise().Replace(type, "");
        name = name.Replace("System.Runtime.CompilerServices.AsyncTaskMethodBuilder`1+AsyncStateMachineBox`1", "AsyncStateMachineBox", StringComparison.Ordinal);
        name = name.Replace("System.Threading.Tasks.", "", StringComparison.Ordinal).Replace("System.Threading.", "", StringComparison.Ordinal);
        name = name.Replace("CspNet.Benchmarks.Papers.", "", StringComparison.Ordinal).Replace("CspNet.Internal.", "", StringComparison.Ordinal);
        return name.Length > 110 ? name[..107] + "..." : name;
    }

    [GeneratedRegex(@"System\.Private\.CoreLib, Version=[^\]]*|, [A-Za-z.]+, Version=[^\]]*")]
    private static partial Regex CompilerNoise();

    private sealed record AllocationSample(DateTime Time, string TypeName, long Amount, long ObjectSize);

    /// <summary>Listens to the runtime's GCAllocationTick events (GC keyword, verbose level).</summary>
    private sealed class AllocationListener : EventListener
    {
        private const int AllocationTickEventId = 10;
        private long _lastEventTicks = DateTime.UtcNow.Ticks;

        internal ConcurrentQueue<AllocationSample> Samples { get; } = new();

        /// <summary>Waits until no event has arrived for two seconds (the dispatch thread has caught up).</summary>
        internal void WaitForQuiet()
        {
            while (DateTime.UtcNow.Ticks - Interlocked.Read(ref _lastEventTicks) < TimeSpan.TicksPerSecond * 2)
            {
                Thread.Sleep(250);
            }
        }

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == "Microsoft-Windows-DotNETRuntime")
            {
                EnableEvents(eventSource, EventLevel.Verbose, (EventKeywords)0x1); // GC keyword
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            if (eventData.EventId != AllocationTickEventId || eventData.Payload is null || eventData.PayloadNames is null)
            {
                return;
            }

            Interlocked.Exchange(ref _lastEventTicks, DateTime.UtcNow.Ticks);
            string type = "?";
            long amount = 0;
            long size = 0;
            for (int i = 0; i < eventData.PayloadNames.Count; i++)
            {
                switch (eventData.PayloadNames[i])
                {
                    case "TypeName":
                        type = eventData.Payload[i] as string ?? "?";
                        break;
                    case "AllocationAmount64":
                        amount = Convert.ToInt64(eventData.Payload[i], Culture);
                        break;
                    case "ObjectSize":
                        size = Convert.ToInt64(eventData.Payload[i], Culture);
                        break;
                }
            }

            Samples.Enqueue(new AllocationSample(eventData.TimeStamp.ToUniversalTime(), type, amount, size));
        }
    }
}
