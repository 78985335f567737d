using System;

namespace CspNet.Alternation;

/// <summary>
/// A guard's place in one <see cref="Alternative"/>: the handle through which the guard reports to
/// the selection engine. The engine passes it to every <see cref="Guard"/> contract call; a guard
/// that learns things on other threads (a channel writer, a network reader) keeps it between
/// <see cref="Guard.Enable"/> and <see cref="Guard.Disable"/>.
/// </summary>
/// <remarks>
/// Thread-safety: every member may be called from any thread at any time. Calls made outside the
/// enabled window of the current selection are harmless: <see cref="Signal"/> then costs at most
/// one extra commit attempt, <see cref="TryClaim"/> returns false and <see cref="Fail"/> is ignored.
/// </remarks>
public abstract class GuardSite
{
    private protected GuardSite()
    {
    }

    /// <summary>The guard's index in the alternative's guard array.</summary>
    public abstract int Index { get; }

    /// <summary>
    /// Says that the guard may have become ready. Idempotent and cheap; a stale or duplicate signal
    /// costs one commit attempt that returns false, never a wrong choice. A parked selection wakes
    /// and tries the guard (<see cref="Guard.TryReserveAsync"/> for asynchronous guards, otherwise a
    /// new round of <see cref="Guard.TryCommit"/>).
    /// </summary>
    public abstract void Signal();

    /// <summary>
    /// Commits the selection to this guard on a partner's behalf (a writer that pairs with a parked
    /// input, a reader that takes a parked offer). Exactly one claim, or one commit by the selecting
    /// process, wins per selection; call it under the lock that makes the partner's hand-over atomic
    /// and complete the hand-over only if it returns true.
    /// </summary>
    /// <returns>True if this guard is now the chosen one; false if the selection has already
    /// committed elsewhere, failed, been cancelled, or is not waiting for this guard.</returns>
    public abstract bool TryClaim();

    /// <summary>
    /// Ends the selection with <paramref name="exception"/> (for a remote guard: the peer is lost),
    /// unless it has committed already. The selecting process gets the exception once every guard
    /// is disabled.
    /// </summary>
    /// <param name="exception">The exception the selection throws.</param>
    public abstract void Fail(Exception exception);

    /// <summary>
    /// Wakes the selecting process after a successful <see cref="TryClaim"/>, if it is parked. Call
    /// it after leaving the lock under which the claim was made.
    /// </summary>
    public abstract void WakeAfterClaim();
}
