namespace CspNet.Benchmarks.Papers;

/// <summary>What one live-process run measured.</summary>
/// <param name="UnitsRequested">Units asked for (pairs, or JVMCSP iterations).</param>
/// <param name="Units">Units created (fewer if the memory guard stopped creation).</param>
/// <param name="ProcessesPerUnit">Processes per unit as the paper counts them (2 per pair, 7 per JVMCSP iteration).</param>
/// <param name="ExtraProcesses">Processes outside the units (JVMCSP counts its main process: 1).</param>
internal sealed record LiveResult(
    long UnitsRequested,
    long Units,
    int ProcessesPerUnit,
    int ExtraProcesses,
    bool StoppedForMemory,
    double CreateSeconds,
    double StartToParkedSeconds,
    double ReleaseToEndSeconds,
    long LiveBytesBefore,
    long LiveBytesCreated,
    long LiveBytesParked,
    long GcHeapBytesParked,
    long WorkingSetParked,
    long PeakWorkingSet,
    long AllocatedBytes,
    double GcPauseSeconds,
    double CpuSeconds,
    int Gen0Collections,
    int Gen1Collections,
    int Gen2Collections,
    long WorkItems)
{
    internal long Processes => (ProcessesPerUnit * Units) + ExtraProcesses;

    internal long ProcessesRequested => (ProcessesPerUnit * UnitsRequested) + ExtraProcesses;

    internal double TotalSeconds => CreateSeconds + StartToParkedSeconds + ReleaseToEndSeconds;

    /// <summary>Live managed bytes per unit while every process is parked (GC.GetTotalMemory(true) after minus before).</summary>
    internal double BytesPerUnit => Units == 0 ? 0 : (double)(LiveBytesParked - LiveBytesBefore) / Units;

    /// <summary>Live managed bytes per process while every process is parked.</summary>
    internal double BytesPerProcess => Units == 0 ? 0 : (double)(LiveBytesParked - LiveBytesBefore) / Processes;

    /// <summary>Of which: channels, process objects and Parallel bookkeeping, before the run starts.</summary>
    internal double CreatedBytesPerProcess => Units == 0 ? 0 : (double)(LiveBytesCreated - LiveBytesBefore) / Processes;

    /// <summary>Of which: what running adds (state-machine boxes, waiters, Parallel's run state).</summary>
    internal double RunningBytesPerProcess => BytesPerProcess - CreatedBytesPerProcess;
}
