using System;

namespace CspNet.Internal;

/// <summary>
/// Spin settings for parked thread processes, chosen from the ping-pong benchmark
/// (benchmarks/CspNet.Benchmarks, PingPongBenchmarks). Spinning only pays when another core
/// can run the partner meanwhile, so a single-core machine never spins.
/// </summary>
internal static class SpinTuning
{
    internal static readonly int SyncWaiterSpinCount = ComputeSpinCount();

    private static int ComputeSpinCount()
    {
        if (Environment.ProcessorCount == 1)
        {
            return 0;
        }

        string? configured = Environment.GetEnvironmentVariable("CSPNET_SPIN_COUNT");
        return int.TryParse(configured, out int value) && value >= 0 ? value : DefaultSpinCount;
    }

    /// <summary>Default number of spin iterations before a thread blocks in the kernel.</summary>
    internal const int DefaultSpinCount = 35;
}
