using System.Globalization;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The process's own counters from Linux's <c>/proc/self/stat</c>: minor page faults (a fresh page
/// mapped: what a large array on fresh large-object-heap memory costs) and CPU time split into
/// user and kernel time (system calls, page faults). Counts, not timings: the machine's load moves
/// them little. Zero where there is no <c>/proc</c>.
/// </summary>
internal readonly record struct KernelCounters(long MinorFaults, long UserTicks, long SystemTicks)
{
    // USER_HZ: /proc counts CPU time in clock ticks of 1/100 s on every Linux this runs on.
    private const double MicrosecondsPerTick = 10_000;

    internal static KernelCounters Read()
    {
        const string path = "/proc/self/stat";
        if (!File.Exists(path))
        {
            return default;
        }

        // The fields after the command name (which may hold spaces) start at field 3 (the state).
        string stat = File.ReadAllText(path);
        string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return new KernelCounters(Field(fields, 10), Field(fields, 14), Field(fields, 15));
    }

    public static KernelCounters operator -(KernelCounters after, KernelCounters before) =>
        new(after.MinorFaults - before.MinorFaults, after.UserTicks - before.UserTicks, after.SystemTicks - before.SystemTicks);

    /// <summary>Per write: page faults, user and kernel CPU time.</summary>
    internal string Describe(long writes) => string.Create(
        CultureInfo.InvariantCulture,
        $"{(double)MinorFaults / writes:F1} minor page faults, user CPU {UserTicks * MicrosecondsPerTick / writes:F0} us, kernel CPU {SystemTicks * MicrosecondsPerTick / writes:F0} us per write");

    // Field n of proc(5) (1-based); fields[0] is field 3.
    private static long Field(string[] fields, int n) => long.Parse(fields[n - 3], CultureInfo.InvariantCulture);
}
