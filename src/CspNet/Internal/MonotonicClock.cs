using System;
using System.Diagnostics;

namespace CspNet.Internal;

/// <summary>Conversions between <see cref="Stopwatch"/> ticks and milliseconds.</summary>
internal static class MonotonicClock
{
    internal static long ToMilliseconds(long ticks) => (long)(ticks * (1000.0 / Stopwatch.Frequency));

    internal static long ToMillisecondsCeiling(long ticks) => (long)Math.Ceiling(ticks * (1000.0 / Stopwatch.Frequency));

    internal static long FromMilliseconds(long milliseconds) => (long)Math.Ceiling(milliseconds * (Stopwatch.Frequency / 1000.0));

    /// <summary>Whole milliseconds, rounded up, until the clock reaches <paramref name="ticks"/>; 0 or less if it has.</summary>
    internal static long MillisecondsUntil(long ticks)
    {
        long remaining = ticks - Stopwatch.GetTimestamp();
        return remaining <= 0 ? 0 : Math.Max(1, ToMillisecondsCeiling(remaining));
    }
}
