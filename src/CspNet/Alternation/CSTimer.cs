using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;

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
/// set it is never ready. A timer belongs to one process.
/// </para>
/// </remarks>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Performance", "CA1822", Justification = "Instance members by design: CSP.NET and JCSP users call them on a timer object.")]
public sealed class CSTimer : Guard
{
    private long _alarm = -1;

    /// <summary>The current time in milliseconds on a monotonic clock with an arbitrary origin.</summary>
    /// <returns>The time.</returns>
    public long Read() => MonotonicClock.ToMilliseconds(Stopwatch.GetTimestamp());

    /// <summary>The timeout in milliseconds on the clock of <see cref="Read"/>, or -1 if none is set.</summary>
    public long TimeOut => _alarm < 0 ? -1 : MonotonicClock.ToMillisecondsCeiling(_alarm);

    /// <summary>Sets the timeout <paramref name="milliseconds"/> from now.</summary>
    /// <param name="milliseconds">The delay; 0 or more.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="milliseconds"/> is negative.</exception>
    public void RelativeTimeOut(long milliseconds)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(milliseconds);
        _alarm = Stopwatch.GetTimestamp() + MonotonicClock.FromMilliseconds(milliseconds);
    }

    /// <summary>Sets the timeout at time <paramref name="time"/> on the clock of <see cref="Read"/>.</summary>
    /// <param name="time">The time, in milliseconds; a time already past makes the guard ready at once.</param>
    public void AbsoluteTimeOut(long time) => _alarm = MonotonicClock.FromMilliseconds(time);

    /// <summary>Removes the timeout: the guard is not ready until a new one is set.</summary>
    public void ClearTimeOut() => _alarm = -1;

    /// <summary>Blocks the calling thread for at least <paramref name="milliseconds"/>.</summary>
    /// <param name="milliseconds">The delay; 0 or more.</param>
    public void Sleep(long milliseconds)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(milliseconds);
        After(Read() + milliseconds);
    }

    /// <summary>Blocks the calling thread until the clock reaches <paramref name="time"/>.</summary>
    /// <param name="time">The time, in milliseconds on the clock of <see cref="Read"/>.</param>
    public void After(long time)
    {
        long target = MonotonicClock.FromMilliseconds(time);
        long remaining;
        while ((remaining = MonotonicClock.MillisecondsUntil(target)) > 0)
        {
            // Thread.Sleep may wake a little early on some systems: sleep again for the rest.
            Thread.Sleep(TimeSpan.FromMilliseconds(remaining));
        }
    }

    /// <summary>Waits, holding no thread, for at least <paramref name="milliseconds"/>.</summary>
    /// <param name="milliseconds">The delay; 0 or more.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes after the delay.</returns>
    public Task SleepAsync(long milliseconds, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(milliseconds);
        return AfterAsync(Read() + milliseconds, cancellationToken);
    }

    /// <summary>Waits, holding no thread, until the clock reaches <paramref name="time"/>.</summary>
    /// <param name="time">The time, in milliseconds on the clock of <see cref="Read"/>.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes at or after <paramref name="time"/>.</returns>
    public async Task AfterAsync(long time, CancellationToken cancellationToken = default)
    {
        long target = MonotonicClock.FromMilliseconds(time);
        long remaining;
        while ((remaining = MonotonicClock.MillisecondsUntil(target)) > 0)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(remaining), cancellationToken).ConfigureAwait(false);
        }
    }

    internal override GuardKind Kind => GuardKind.Checked;

    internal override long Alarm => _alarm;

    internal override bool TryCommit(AlternativeCore alternative, int index)
    {
        long alarm = _alarm;
        return alarm >= 0 && Stopwatch.GetTimestamp() >= alarm;
    }
}
