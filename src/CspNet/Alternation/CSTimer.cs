using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using CspNet.Internal;
using CspNet.Internal.Processes;

namespace CspNet;

/// <summary>
/// A timer on a monotonic clock (it never jumps with the wall clock): read the time, sleep,
/// and, as a guard in an <see cref="Alternative"/>, become ready when a timeout passes.
/// </summary>
/// <remarks>
/// <para>Times are in milliseconds on the clock of <see cref="Read"/>, as in CSP.NET and JCSP.</para>
/// <example>
/// A guard that fires if nothing else happens within one second (paper, listing 5):
/// <code>
/// var timer = new CSTimer();
/// var alt = new Alternative(new Guard[] { plus, minus, timer });
/// timer.RelativeTimeOut(1000);
/// int chosen = alt.FairSelect();
/// </code>
/// </example>
/// <para>
/// The guard is ready when the clock has reached the timeout, never earlier. With no timeout
/// set it is never ready, and a selection whose only guards are such timers throws
/// <see cref="InvalidOperationException"/> instead of waiting forever. A timer belongs to one process.
/// </para>
/// </remarks>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Performance", "CA1822", Justification = "Instance members by design: CSP.NET and JCSP users call them on a timer object.")]
public sealed class CSTimer : Guard
{
    // Stopwatch timestamp of the timeout; long.MaxValue when none is set.
    private long _alarm = long.MaxValue;

    /// <summary>The current time in milliseconds on a monotonic clock with an arbitrary origin.</summary>
    /// <returns>The time.</returns>
    public long Read() => MonotonicClock.ToMilliseconds(MonotonicClock.Now);

    /// <summary>The timeout in milliseconds on the clock of <see cref="Read"/>, or -1 if none is set.</summary>
    public long TimeOut => _alarm == long.MaxValue ? -1 : MonotonicClock.ToMillisecondsCeiling(_alarm);

    /// <summary>Sets the timeout <paramref name="milliseconds"/> from now.</summary>
    /// <param name="milliseconds">The delay; 0 or more.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="milliseconds"/> is negative.</exception>
    public void RelativeTimeOut(long milliseconds)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(milliseconds);
        _alarm = Deadline(milliseconds);
    }

    /// <summary>Sets the timeout at time <paramref name="time"/> on the clock of <see cref="Read"/>.</summary>
    /// <param name="time">The time, in milliseconds; a time already past makes the guard ready at once.</param>
    public void AbsoluteTimeOut(long time) => _alarm = Math.Min(MonotonicClock.FromMilliseconds(time), long.MaxValue - 1);

    /// <summary>Removes the timeout: the guard is not ready until a new one is set.</summary>
    public void ClearTimeOut() => _alarm = long.MaxValue;

    /// <summary>Blocks the calling thread for at least <paramref name="milliseconds"/>.</summary>
    /// <param name="milliseconds">The delay; 0 or more.</param>
    public void Sleep(long milliseconds)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(milliseconds);
        ProcessContext.ThrowIfBlockingInAsyncProcess("Sleep(milliseconds)", "SleepAsync(milliseconds)");
        SleepUntil(Deadline(milliseconds));
    }

    /// <summary>Blocks the calling thread until the clock reaches <paramref name="time"/>.</summary>
    /// <param name="time">The time, in milliseconds on the clock of <see cref="Read"/>.</param>
    public void After(long time)
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("After(time)", "AfterAsync(time)");
        SleepUntil(MonotonicClock.FromMilliseconds(time));
    }

    /// <summary>Waits, holding no thread, for at least <paramref name="milliseconds"/>.</summary>
    /// <param name="milliseconds">The delay; 0 or more.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes after the delay.</returns>
    public Task SleepAsync(long milliseconds, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(milliseconds);
        return SleepUntilAsync(Deadline(milliseconds), cancellationToken);
    }

    /// <summary>Waits, holding no thread, until the clock reaches <paramref name="time"/>.</summary>
    /// <param name="time">The time, in milliseconds on the clock of <see cref="Read"/>.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes at or after <paramref name="time"/>.</returns>
    public Task AfterAsync(long time, CancellationToken cancellationToken = default) =>
        SleepUntilAsync(MonotonicClock.FromMilliseconds(time), cancellationToken);

    /// <inheritdoc />
    protected internal override GuardCapabilities Capabilities => GuardCapabilities.Deadline;

    /// <inheritdoc />
    protected internal override long DeadlineTimestamp => _alarm;

    /// <inheritdoc />
    /// <returns>False when no timeout is set: such a timer can never fire.</returns>
    protected internal override bool Prepare(GuardSite site) => _alarm != long.MaxValue;

    /// <inheritdoc />
    protected internal override bool TryCommit(GuardSite site) => MonotonicClock.Now >= _alarm;

    // Deadlines are computed in ticks from the exact current timestamp: going through the
    // millisecond clock (which rounds down) could end a sleep up to a millisecond early.
    private static long Deadline(long milliseconds) =>
        Math.Min(MonotonicClock.AddSaturating(MonotonicClock.Now, MonotonicClock.FromMilliseconds(milliseconds)), long.MaxValue - 1);

    private static void SleepUntil(long deadline)
    {
        long remaining;
        while ((remaining = MonotonicClock.MillisecondsUntil(deadline)) > 0)
        {
            // Thread.Sleep may wake a little early on some systems: sleep again for the rest.
            // Sleeping is what the caller asked for (CSTimer.Sleep/After, the paper's API).
#pragma warning disable RS0030
            Thread.Sleep((int)Math.Min(remaining, int.MaxValue - 1));
#pragma warning restore RS0030
        }
    }

    private static async Task SleepUntilAsync(long deadline, CancellationToken cancellationToken)
    {
        long remaining;
        while ((remaining = MonotonicClock.MillisecondsUntil(deadline)) > 0)
        {
            await Task.Delay((int)Math.Min(remaining, int.MaxValue - 1), cancellationToken).ConfigureAwait(false);
        }
    }
}
