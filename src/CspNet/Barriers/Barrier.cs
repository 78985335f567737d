using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;

namespace CspNet;

/// <summary>
/// A CSP barrier: each enrolled process calls <see cref="Sync"/> (or <see cref="SyncAsync"/>) and
/// is held until every enrolled process has done so; then all continue together and the next
/// phase begins.
/// </summary>
/// <remarks>
/// <para>
/// Processes may join (<see cref="Enroll"/>) and leave (<see cref="Resign"/>) a running barrier.
/// A process that resigns while the others wait for it no longer holds them back: if it was the
/// last one missing, the phase completes at once.
/// </para>
/// <para>
/// Cancellation: a cancelled <see cref="SyncAsync"/> takes no part in the phase (the others still
/// wait for that process to sync again or resign). A sync that completed is never reported as
/// cancelled. Poison: <see cref="Poison"/> fails every waiting and every later sync with
/// <see cref="PoisonException"/>.
/// </para>
/// <para>Thread-safety: all members are safe to call from any thread.</para>
/// </remarks>
[DebuggerDisplay("{DebuggerDisplay,nq}")]
public sealed class Barrier : IPoisonable
{
    private readonly BarrierCore _core;

    /// <summary>Creates a barrier with <paramref name="enrolled"/> processes enrolled.</summary>
    /// <param name="enrolled">The number of processes that must sync in each phase; may be 0 and grow by <see cref="Enroll"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="enrolled"/> is negative.</exception>
    public Barrier(int enrolled = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(enrolled);
        _core = new BarrierCore(enrolled);
    }

    /// <summary>The number of processes enrolled now.</summary>
    public int Enrolled => _core.Enrolled;

    /// <summary>The number of processes waiting in the current phase.</summary>
    public int Waiting => _core.Waiting;

    /// <summary>Blocks until every enrolled process has synced in this phase.</summary>
    /// <exception cref="PoisonException">The barrier is poisoned.</exception>
    /// <exception cref="InvalidOperationException">No process is enrolled.</exception>
    public void Sync() => _core.Arrive();

    /// <summary>Completes, holding no thread while it waits, when every enrolled process has synced in this phase.</summary>
    /// <param name="cancellationToken">Withdraws this process from the phase if cancelled before the phase completes.</param>
    /// <returns>A task that completes when the phase completes.</returns>
    /// <exception cref="PoisonException">The barrier is poisoned.</exception>
    /// <exception cref="InvalidOperationException">No process is enrolled.</exception>
    /// <exception cref="OperationCanceledException">Cancelled before the phase completed.</exception>
    public ValueTask SyncAsync(CancellationToken cancellationToken = default) => _core.ArriveAsync(cancellationToken);

    /// <summary>Enrolls one more process; the current phase now waits for it too.</summary>
    /// <exception cref="PoisonException">The barrier is poisoned.</exception>
    public void Enroll() => _core.Enroll();

    /// <summary>Resigns one enrolled process. If the others were waiting only for it, they are released.</summary>
    /// <exception cref="InvalidOperationException">No process is enrolled.</exception>
    public void Resign() => _core.Resign();

    /// <inheritdoc />
    public void Poison() => _core.Poison();

    /// <summary>Enrolled, waiting and poisoned, without taking the lock (a debugger may have frozen its holder).</summary>
    private string DebuggerDisplay => _core.DebuggerDisplay;
}
