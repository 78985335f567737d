using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;

namespace CspNet;

/// <summary>
/// Something an <see cref="Alternative"/> can choose: a channel's reading end
/// (<see cref="AltingChannelIn{T}"/>), an offered write (<see cref="AltingChannelOut{T}"/>), a
/// <see cref="CSTimer"/> timeout, <see cref="Skip"/>, or a guard of your own.
/// </summary>
/// <remarks>
/// <para>
/// Users put guards in an array and hand it to an <see cref="Alternative"/>. The protected members
/// below are the <b>guard contract</b>: the only way the selection engine talks to a guard. The
/// built-in guards implement it exactly as a guard in another assembly would (a remote channel end,
/// say), so a guard of your own takes part in <c>PriSelect</c>, <c>FairSelect</c>, preconditions,
/// timeouts and cancellation with the same guarantees. The contract is new; it may still change
/// before version 1.0.
/// </para>
/// <para>
/// One selection calls, on each guard whose precondition is true:
/// <list type="number">
/// <item><see cref="Prepare"/> once, before anything is taken: throw to reject a misuse, return false
/// if the guard can never become ready in this selection.</item>
/// <item><see cref="TryCommit"/> in selection order, while nothing is enabled and nobody but the
/// selecting process can commit the selection: make the guard's event happen now, or return false
/// having consumed nothing.</item>
/// <item>If no guard committed: <see cref="Enable"/> before the process waits, and
/// <see cref="Disable"/> after it. Between the two the guard tells the engine, through its
/// <see cref="GuardSite"/>, that it may have become ready (<see cref="GuardSite.Signal"/>), commits
/// the selection on a partner's behalf (<see cref="GuardSite.TryClaim"/>), or fails it
/// (<see cref="GuardSite.Fail"/>).</item>
/// <item>For a guard with <see cref="GuardCapabilities.CommitsAsynchronously"/> that signalled:
/// <see cref="TryReserveAsync"/>, in its turn during the scan (nothing else enabled) or, for a
/// signal that arrives during the wait, while the other guards stay enabled and may still win. A
/// timeout that passes, a partner that wins and a caller that cancels all cancel the
/// reservation's token.</item>
/// <item><see cref="Confirm"/> on the chosen guard after every guard is disabled, and
/// <see cref="Release"/> on a guard that reserved but was not chosen.</item>
/// </list>
/// The engine runs these calls on the selecting process's thread, never two at once for one
/// selection, and never under a lock of its own; only <see cref="GuardSite"/> members may be called
/// from other threads.
/// </para>
/// <para>
/// Thread-safety: a guard belongs to one process. Two selections that use the same guard at the
/// same time are a misuse; the built-in guards detect it and throw
/// <see cref="System.InvalidOperationException"/>.
/// </para>
/// </remarks>
public abstract class Guard
{
    /// <summary>Creates a guard.</summary>
    protected Guard()
    {
    }

    /// <summary>What the engine may expect of this guard. Read once, when an alternative is created.</summary>
    protected internal virtual GuardCapabilities Capabilities => GuardCapabilities.None;

    /// <summary>
    /// For a guard with <see cref="GuardCapabilities.Deadline"/>: the <see cref="System.Diagnostics.Stopwatch"/>
    /// timestamp at which the guard becomes ready, or <see cref="long.MaxValue"/> for none. The engine
    /// bounds its wait by the earliest deadline instead of polling.
    /// </summary>
    protected internal virtual long DeadlineTimestamp => long.MaxValue;

    /// <summary>
    /// Whether <see cref="Capabilities"/> may change between the scans of one selection (a channel
    /// end whose channel's home moved to another program commits asynchronously from then on).
    /// The engine then reads <see cref="Capabilities"/> again at the start of every scan; a guard
    /// whose capabilities changed while it was enabled calls <see cref="GuardSite.Signal"/> while
    /// they are still the old ones, so that a new scan begins. Read once, with <see cref="Capabilities"/>.
    /// </summary>
    internal virtual bool CapabilitiesChange => false;

    /// <summary>
    /// Called once at the start of each selection that considers this guard, before any guard is
    /// committed. Throw (for example <see cref="System.InvalidOperationException"/>) to reject a
    /// misuse: the selection then fails having consumed nothing.
    /// </summary>
    /// <param name="site">The guard's place in the alternative.</param>
    /// <returns>False if the guard cannot become ready during this selection (a timer with no
    /// timeout); a selection in which no guard can become ready throws instead of waiting forever.</returns>
    protected internal virtual bool Prepare(GuardSite site) => true;

    /// <summary>
    /// Tries to make the guard's event happen now for the selecting process: an input takes a value
    /// (and keeps it for the process's next read), an output delivers its value, a timer checks the
    /// clock. Nothing is enabled while this runs, so no partner can commit the selection meanwhile.
    /// </summary>
    /// <remarks>
    /// A guard with <see cref="GuardCapabilities.CommitsAsynchronously"/> that believes it is ready
    /// but cannot commit without a round trip calls <see cref="GuardSite.Signal"/> here and returns
    /// false: the engine then reserves it (<see cref="TryReserveAsync"/>) at once, in its place in
    /// the selection order, so that such guards keep <c>PriSelect</c>'s order and
    /// <c>FairSelect</c>'s fairness beside local guards.
    /// </remarks>
    /// <param name="site">The guard's place in the alternative.</param>
    /// <returns>True if the event happened; false, having consumed nothing, if the guard is not ready.</returns>
    protected internal abstract bool TryCommit(GuardSite site);

    /// <summary>
    /// Called before the selecting process waits. From now until <see cref="Disable"/> the guard may
    /// call <see cref="GuardSite.Signal"/>, <see cref="GuardSite.TryClaim"/> and
    /// <see cref="GuardSite.Fail"/> from any thread. A built-in channel end parks a waiter in its
    /// channel here; if the guard is ready already it may commit at once with
    /// <see cref="GuardSite.TryClaim"/>.
    /// </summary>
    /// <param name="site">The guard's place in the alternative.</param>
    protected internal virtual void Enable(GuardSite site)
    {
    }

    /// <summary>
    /// Called after the wait: undoes <see cref="Enable"/>. When it returns, the guard must no longer
    /// call <see cref="GuardSite.TryClaim"/> for this selection.
    /// </summary>
    /// <param name="site">The guard's place in the alternative.</param>
    protected internal virtual void Disable(GuardSite site)
    {
    }

    /// <summary>
    /// For a guard with <see cref="GuardCapabilities.CommitsAsynchronously"/> that signalled while
    /// enabled: reserves its event (a remote input asks its peer to set a value aside for this
    /// process). The other guards stay enabled meanwhile; if one of them wins, or the selection is
    /// cancelled, <paramref name="cancellationToken"/> fires. A reservation is followed by exactly one
    /// <see cref="Confirm"/> (the guard was chosen) or <see cref="Release"/> (it was not).
    /// </summary>
    /// <param name="site">The guard's place in the alternative.</param>
    /// <param name="cancellationToken">Fires when the attempt is no longer wanted.</param>
    /// <returns>True if the event is reserved; false, having reserved nothing, if the guard was not
    /// ready after all (a normal answer: the selection goes on with the other guards). An exception
    /// fails the selection.</returns>
    protected internal virtual ValueTask<bool> TryReserveAsync(GuardSite site, CancellationToken cancellationToken) =>
        new(false);

    /// <summary>
    /// Called on the chosen guard once every guard is disabled: make the event final (deliver a
    /// reserved value, hand a taken value to the next read). Throw to make the selection throw, for
    /// example <see cref="PoisonException"/> for an offer that met a poisoned channel.
    /// </summary>
    /// <param name="site">The guard's place in the alternative.</param>
    protected internal virtual void Confirm(GuardSite site)
    {
    }

    /// <summary>Called on a guard whose reservation was not chosen: give the reserved event back.</summary>
    /// <param name="site">The guard's place in the alternative.</param>
    protected internal virtual void Release(GuardSite site)
    {
    }
}
