namespace CspNet.Benchmarks.Papers;

/// <summary>
/// JVMCSP section 3.3 / Table 3, simpler shape: N pairs of async processes, each pair connected by
/// two One2OneChannel&lt;int&gt; (A writes to B on c1, B writes back on c2, <c>exchanges</c> times).
/// After its first exchange every B waits at a shared gate and every A parks writing its second
/// value, so all 2N processes are alive and parked at the same time.
/// </summary>
internal static class LivePairs
{
    /// <summary>Creates <paramref name="pairs"/> pairs in one <see cref="Parallel"/> and runs them through <see cref="LiveRunner"/>.</summary>
    /// <param name="pairs">Pairs requested (2 processes each).</param>
    /// <param name="exchanges">Round trips per pair (at least 1); the gate sits after the first when there are two or more.</param>
    /// <param name="measureMemory">Force full collections to measure live bytes (slow on big heaps; not timed).</param>
    /// <param name="minAvailableBytes">Memory guard (0: none); see <see cref="LiveRunner.Run"/>.</param>
    /// <param name="runningBytesPerPair">Estimate of what one pair allocates once running, for the guard.</param>
    /// <param name="log">Progress messages, or null.</param>
    internal static LiveResult Run(long pairs, int exchanges, bool measureMemory, long minAvailableBytes = 0, double runningBytesPerPair = 1000, Action<string>? log = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(exchanges, 1);
        int gateAt = exchanges > 1 ? 1 : 0;
        return LiveRunner.Run(
            pairs,
            (2, 0),
            2,
            (main, gate) =>
            {
                var c1 = new One2OneChannel<int>();
                var c2 = new One2OneChannel<int>();
                main.AddProcess(new PairWriter(c1, c2, exchanges, gateAt, gate));
                main.AddProcess(new PairReplier(c1, c2, exchanges, gateAt, gate));
            },
            measureMemory,
            minAvailableBytes,
            runningBytesPerPair,
            log);
    }
}
