using System;
using System.Diagnostics;

namespace CspNet.Internal;

/// <summary>
/// Conversions between <see cref="Stopwatch"/> timestamps ("ticks") and milliseconds, saturating
/// at the ends of the range so that "far future" stays far future instead of wrapping around.
/// </summary>
internal static class MonotonicClock
{
    private static readonly double s_ticksPerMillisecond = Stopwatch.Frequency / 1000.0;

    internal static long Now => Stopwatch.GetTimestamp();

    internal static long ToMilliseconds(long ticks) => Saturate(Math.Floor(ticks / s_ticksPerMillisecond));

    internal static long ToMillisecondsCeiling(long ticks) => Saturate(Math.Ceiling(ticks / s_ticksPerMillisecond));

    internal static long FromMilliseconds(long milliseconds) => Saturate(Math.Ceiling(milliseconds * s_ticksPerMillisecond));

    /// <summary>Adds without wrapping around.</summary>
    internal static long AddSaturating(long ticks, long delta)
    {
        long sum = unchecked(ticks + delta);
        return ((ticks ^ sum) & (delta ^ sum)) < 0 ? (delta > 0 ? long.MaxValue : long.MinValue) : sum;
    }

    /// <summary>Whole milliseconds, rounded up, until the clock reaches <paramref name="ticks"/>; 0 if it has.</summary>
    internal static long MillisecondsUntil(long ticks)
    {
        long now = Now;
        if (ticks <= now)
        {
            return 0;
        }

        long remaining = ticks - now;
        return remaining < 0 ? long.MaxValue : Math.Max(1, ToMillisecondsCeiling(remaining));
    }

    /// <summary>
    /// A timeout for <c>Wait</c>/<c>Timer.Change</c> until <paramref name="ticks"/>, capped at about
    /// 24 days (their limit); a capped wait simply ends early and the caller checks the clock again.
    /// </summary>
    internal static int WaitMilliseconds(long ticks) => (int)Math.Min(MillisecondsUntil(ticks), int.MaxValue - 1);

    private static long Saturate(double value) =>
        value >= long.MaxValue ? long.MaxValue : value <= long.MinValue ? long.MinValue : (long)value;
}
