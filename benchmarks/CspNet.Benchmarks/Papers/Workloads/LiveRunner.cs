using System.Diagnostics;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// Runs a live-process program: creates its units in one <see cref="Parallel"/>, runs it until
/// every process that parks has said so at the <see cref="LiveGate"/>, measures, opens the gate
/// and waits for the end. Shared by the pair shape (<see cref="LivePairs"/>) and JVMCSP's own
/// program (<see cref="JvmcspProgram"/>).
/// </summary>
internal static class LiveRunner
{
    /// <param name="units">Units requested.</param>
    /// <param name="shape">Processes per unit and outside the units, as the paper counts them.</param>
    /// <param name="parkingPerUnit">Processes per unit that report at the gate before they park.</param>
    /// <param name="addUnit">Creates one unit and adds it to the main <see cref="Parallel"/>.</param>
    /// <param name="measureMemory">Force full collections to measure live bytes (slow on big heaps; not timed).</param>
    /// <param name="minAvailableBytes">
    /// Memory guard (0: none): stop creating units when the machine's available memory, minus what
    /// the units created so far will still allocate once running, drops below this.
    /// </param>
    /// <param name="runningBytesPerUnit">Estimate of what one unit allocates once running, for the guard.</param>
    /// <param name="log">Progress messages, or null.</param>
    internal static LiveResult Run(
        long units,
        (int PerUnit, int Extra) shape,
        int parkingPerUnit,
        Action<Parallel, LiveGate> addUnit,
        bool measureMemory,
        long minAvailableBytes,
        double runningBytesPerUnit,
        Action<string>? log)
    {
        var gate = new LiveGate();
        ResetPeakWorkingSet();
        long allocatedStart = GC.GetTotalAllocatedBytes(precise: true);
        long before = measureMemory ? GC.GetTotalMemory(forceFullCollection: true) : 0;
        var gc = new GcPhases();

        long workItemsStart = ThreadPool.CompletedWorkItemCount;
        TimeSpan cpuStart = Process.GetCurrentProcess().TotalProcessorTime;
        var watch = Stopwatch.StartNew();
        var main = new Parallel();
        long created = 0;
        bool stoppedForMemory = false;
        for (; created < units; created++)
        {
            if (minAvailableBytes > 0 && (created & 0x1FFFF) == 0 && created > 0)
            {
                long available = MachineMemory.AvailableBytes();
                long reserve = (long)(created * runningBytesPerUnit);
                if (available >= 0 && available - reserve < minAvailableBytes)
                {
                    log?.Invoke($"  stopped creating at {created:N0} units: {available / (1 << 20):N0} MiB available, {reserve / (1 << 20):N0} MiB still to come when they run, guard {minAvailableBytes / (1 << 20):N0} MiB");
                    stoppedForMemory = true;
                    break;
                }
            }

            addUnit(main, gate);
        }

        double createSeconds = watch.Elapsed.TotalSeconds;
        gc.EndPhase();
        TimeSpan cpu = Process.GetCurrentProcess().TotalProcessorTime - cpuStart;
        long afterCreate = measureMemory ? GC.GetTotalMemory(forceFullCollection: true) : 0;
        log?.Invoke($"  created {created:N0} units in {createSeconds:F2} s (CPU {cpu.TotalSeconds:F2} s, load {LoadAverage()})");

        gc.StartPhase();
        cpuStart = Process.GetCurrentProcess().TotalProcessorTime;
        watch.Restart();
        Task run = main.RunAsync();
        WaitUntilParked(gate, parkingPerUnit * created, run);
        double startSeconds = watch.Elapsed.TotalSeconds;
        gc.EndPhase();
        TimeSpan phaseCpu = Process.GetCurrentProcess().TotalProcessorTime - cpuStart;
        cpu += phaseCpu;
        long workItems = ThreadPool.CompletedWorkItemCount - workItemsStart;
        log?.Invoke($"  all {parkingPerUnit * created:N0} parking processes parked after {startSeconds:F2} s (CPU {phaseCpu.TotalSeconds:F2} s, {workItems:N0} thread-pool work items, load {LoadAverage()})");

        long parked = 0;
        long heap = 0;
        long workingSet = 0;
        if (measureMemory)
        {
            parked = GC.GetTotalMemory(forceFullCollection: true);
            heap = GC.GetGCMemoryInfo(GCKind.Any).HeapSizeBytes;
            workingSet = Environment.WorkingSet;
        }

        // Keep the parked state reachable until measured (the Parallel holds everything anyway).
        GC.KeepAlive(main);

        gc.StartPhase();
        cpuStart = Process.GetCurrentProcess().TotalProcessorTime;
        watch.Restart();
        gate.Open();
        run.GetAwaiter().GetResult();
        double releaseSeconds = watch.Elapsed.TotalSeconds;
        gc.EndPhase();
        phaseCpu = Process.GetCurrentProcess().TotalProcessorTime - cpuStart;
        cpu += phaseCpu;
        long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedStart;
        long peak = PeakWorkingSet();
        log?.Invoke($"  released, all ended after {releaseSeconds:F2} s (CPU {phaseCpu.TotalSeconds:F2} s)");

        return new LiveResult(units, created, shape.PerUnit, shape.Extra, stoppedForMemory, createSeconds, startSeconds, releaseSeconds,
            before, afterCreate, parked, heap, workingSet, peak, allocated, gc.Pause.TotalSeconds, cpu.TotalSeconds, gc.Gen0, gc.Gen1, gc.Gen2, ThreadPool.CompletedWorkItemCount - workItemsStart);
    }

    /// <summary>The machine's load averages (Linux), printed beside the phases' times.</summary>
    private static string LoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (IOException)
        {
            return "?";
        }
        catch (UnauthorizedAccessException)
        {
            return "?";
        }
    }

    /// <summary>Waits until every parking process has reported it is about to park and the thread pool has run dry.</summary>
    private static void WaitUntilParked(LiveGate gate, long processes, Task run)
    {
        var spin = new SpinWait();
        while (gate.Parked < processes)
        {
            if (run.IsFaulted)
            {
                run.GetAwaiter().GetResult();
            }

            spin.SpinOnce(sleep1Threshold: 20);
        }

        // The last arrivals may still be between counting themselves and parking.
        while (ThreadPool.PendingWorkItemCount > 0)
        {
            Thread.Sleep(1);
        }

        Thread.Sleep(20);
    }

    /// <summary>Resets the kernel's peak-RSS mark of this process (Linux: "5" to /proc/self/clear_refs), so that each run reports its own peak.</summary>
    private static void ResetPeakWorkingSet()
    {
        try
        {
            File.WriteAllText("/proc/self/clear_refs", "5");
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    /// <summary>Peak RSS since the last reset (VmHWM), or the process's own peak where /proc is missing.</summary>
    private static long PeakWorkingSet()
    {
        try
        {
            foreach (string line in File.ReadLines("/proc/self/status"))
            {
                if (line.StartsWith("VmHWM:", StringComparison.Ordinal))
                {
                    string[] parts = line[6..].Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    return long.Parse(parts[0], System.Globalization.CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }

        return Process.GetCurrentProcess().PeakWorkingSet64;
    }

    /// <summary>GC pauses and collections inside the timed phases only (the measuring collections are excluded).</summary>
    private sealed class GcPhases
    {
        private TimeSpan _pauseStart;
        private int _gen0Start;
        private int _gen1Start;
        private int _gen2Start;

        internal GcPhases() => StartPhase();

        internal TimeSpan Pause { get; private set; }

        internal int Gen0 { get; private set; }

        internal int Gen1 { get; private set; }

        internal int Gen2 { get; private set; }

        internal void StartPhase()
        {
            _pauseStart = GC.GetTotalPauseDuration();
            _gen0Start = GC.CollectionCount(0);
            _gen1Start = GC.CollectionCount(1);
            _gen2Start = GC.CollectionCount(2);
        }

        internal void EndPhase()
        {
            Pause += GC.GetTotalPauseDuration() - _pauseStart;
            Gen0 += GC.CollectionCount(0) - _gen0Start;
            Gen1 += GC.CollectionCount(1) - _gen1Start;
            Gen2 += GC.CollectionCount(2) - _gen2Start;
        }
    }
}
