using CspNet.Internal;

namespace CspNet;

/// <summary>
/// Something an <see cref="Alternative"/> can wait for: a channel's reading end
/// (<see cref="AltingChannelIn{T}"/>), a pending write (<see cref="AltingChannelOut{T}"/>), a
/// <see cref="CSTimer"/> timeout, or <see cref="Skip"/>.
/// </summary>
/// <remarks>
/// The library defines every guard kind; the members that drive a guard are internal. A guard
/// belongs to one process: give each process its own channel ends and timers.
/// </remarks>
public abstract class Guard
{
    private protected Guard()
    {
    }

    /// <summary>
    /// How the alternative learns that the guard may be ready: pushed (input ends signal their
    /// alternative when their channel gains an item) or checked on every selection (skips, timers
    /// and output ends, which are cheap to check or few).
    /// </summary>
    internal abstract GuardKind Kind { get; }

    /// <summary>
    /// Binds the guard to <paramref name="alternative"/> at <paramref name="index"/> so that its
    /// readiness is pushed there, and reports the current readiness. Only for pushed guards.
    /// </summary>
    internal virtual void Activate(AlternativeCore alternative, int index)
    {
    }

    /// <summary>
    /// Tries to make the guard's event happen for <paramref name="alternative"/>, which is
    /// selecting and cannot be claimed by anyone else meanwhile (it has no offers out). An input
    /// end takes a value into its own hand-over slot; an output end delivers its offered value.
    /// Returns false, consuming nothing, if the guard is not ready.
    /// </summary>
    internal abstract bool TryCommit(AlternativeCore alternative, int index);

    /// <summary>
    /// Called before the alternative waits. An output end parks its offer in the channel, where
    /// a reader may claim it while the alternative waits; or, if a reader is already there,
    /// commits at once.
    /// </summary>
    internal virtual EnableResult Enable(AlternativeCore alternative, int index) => EnableResult.Waiting;

    /// <summary>After the wait: withdraws what <see cref="Enable"/> put out.</summary>
    internal virtual void Disable(AlternativeCore alternative, int index)
    {
    }

    /// <summary>For timers: the <see cref="System.Diagnostics.Stopwatch"/> timestamp at which the guard becomes ready; <see cref="long.MaxValue"/> for none.</summary>
    internal virtual long Alarm => long.MaxValue;
}
