using System;
using System.Threading;

namespace CspNet.Internal.Scheduling;

/// <summary>
/// The hand-off's fairness backstop, as Go's sysmon is its scheduler's: once per tick, while any
/// chain of hand-offs runs, moves the slotted continuations of a thread that has started nothing
/// since the last tick to the thread pool.
/// </summary>
/// <remarks>
/// <para>
/// Slotted continuations run when their thread's current continuation returns. If that never
/// happens soon (a process that computes without parking, or one that blocks its pool thread,
/// sync over async), they would wait; the watchdog bounds the wait to one or two ticks.
/// </para>
/// <para>
/// This is not polling. Nothing ever waits for the watchdog: a hand-off that goes well never
/// sees it, and nobody sleeps or spins until it fires. It is a one-shot timer, armed only while
/// a chain runs (the first chain after a quiet tick arms it again) and disarmed at the first tick
/// that finds none; an idle program has no timer armed.
/// </para>
/// </remarks>
internal static class Watchdog
{
    /// <summary>Tick length: the longest a continuation waits behind a thread that does not come back, give or take one tick.</summary>
    internal const int TickMilliseconds = 1;

    private static readonly Lock s_lock = new();
    private static readonly Timer s_timer = CreateTimer();
    private static HandOffRunner[] s_runners = [];
    private static int s_chains;
    private static int s_armed;
    private static long s_ticks;

    /// <summary>Ticks so far: tests use it to wait for a rescue without guessing a time.</summary>
    internal static long Ticks => Interlocked.Read(ref s_ticks);

    /// <summary>Adds a thread's runner to those watched; forgets runners of threads that have ended.</summary>
    internal static void Register(HandOffRunner runner)
    {
        lock (s_lock)
        {
            HandOffRunner[] runners = Array.FindAll(s_runners, static r => r.Thread.IsAlive);
            Array.Resize(ref runners, runners.Length + 1);
            runners[^1] = runner;
            Volatile.Write(ref s_runners, runners);
        }
    }

    internal static void ChainStarted()
    {
        // The increment is a full fence: a tick that disarms after it sees the chain (below).
        Interlocked.Increment(ref s_chains);
        if (Volatile.Read(ref s_armed) == 0)
        {
            TryArm();
        }
    }

    internal static void ChainEnded() => Interlocked.Decrement(ref s_chains);

    private static Timer CreateTimer()
    {
        // The timer must not capture whichever caller's execution context happens to create it.
        using (ExecutionContext.SuppressFlow())
        {
            return new Timer(static _ => OnTick(), null, Timeout.Infinite, Timeout.Infinite);
        }
    }

    /// <summary>Whoever moves the flag from 0 to 1 owns the one-shot timer's next arming: never two in flight.</summary>
    private static void TryArm()
    {
        if (Interlocked.CompareExchange(ref s_armed, 1, 0) == 0)
        {
            s_timer.Change(TickMilliseconds, Timeout.Infinite);
        }
    }

    private static void OnTick()
    {
        Interlocked.Increment(ref s_ticks);
        foreach (HandOffRunner runner in Volatile.Read(ref s_runners))
        {
            runner.RescueIfStuck();
        }

        if (Volatile.Read(ref s_chains) > 0)
        {
            s_timer.Change(TickMilliseconds, Timeout.Infinite);
            return;
        }

        // Quiet: disarm. A chain that started meanwhile either saw the flag still set (and is
        // seen here, after the exchange) or sees it cleared and arms again itself.
        Interlocked.Exchange(ref s_armed, 0);
        if (Volatile.Read(ref s_chains) > 0)
        {
            TryArm();
        }
    }
}
