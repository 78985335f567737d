using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;

namespace CspNet;

/// <summary>
/// Choice between guards (the CSP external choice): waits until at least one guard is ready and
/// commits exactly one of them, returning its index. Guards are channel reading ends
/// (<see cref="AltingChannelIn{T}"/>), offered writes (<see cref="AltingChannelOut{T}"/>),
/// <see cref="CSTimer"/> timeouts and <see cref="Skip"/>.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="PriSelect()"/> chooses the first ready guard in array order;
/// <see cref="FairSelect()"/> starts after the guard it chose last time, so among n guards each
/// guard that stays ready is chosen at least once in any n consecutive calls;
/// <see cref="Select()"/> chooses any ready guard (currently as <see cref="PriSelect()"/>).
/// Each has an overload with one boolean precondition per guard (a guard whose precondition is
/// false is ignored) and an async form that holds no thread while it waits.
/// </para>
/// <para>
/// Exactness: a guard that is not chosen consumes nothing and has no effect. When an input end is
/// chosen, its value has already been taken and is held in the end, so the next read returns it
/// at once. When an output guard is chosen, its value has been written.
/// </para>
/// <para>
/// A selection that can never choose anything throws <see cref="InvalidOperationException"/>
/// instead of waiting forever: every precondition false, or only timers without a timeout.
/// An output guard needs an <see cref="AltingChannelOut{T}.Offer"/> before each selection that may
/// choose it.
/// </para>
/// <para>
/// Cost: a selection first checks the guards in order without waiting (a channel end that is not
/// ready costs a few field reads, no lock). If none is ready, it parks one waiter per channel in
/// those channels and sleeps, thread or async, until a partner commits it directly (the writer that
/// pairs with a parked input hands its value over in the same step) or a timeout passes: there is
/// no polling, a write wakes at most one alternation, and the channels hold nothing of the
/// alternative once the selection returns.
/// </para>
/// <para>
/// Interrupts and cancellation: a selection cancelled (async) or interrupted
/// (<see cref="Thread.Interrupt"/>) before a guard committed has consumed nothing. If a guard
/// committed first, the selection returns it: a value that was taken is never lost (an interrupt
/// is then raised again at the thread's next blocking call).
/// </para>
/// <para>
/// Guards of your own: derive from <see cref="Guard"/> and implement its protected members (the
/// guard contract); see <see cref="Guard"/>.
/// </para>
/// <para>
/// Thread-safety: an alternative, and its guards, belong to one process; selections on one
/// alternative must not overlap.
/// </para>
/// </remarks>
[System.Diagnostics.DebuggerDisplay("{_core.DebuggerDisplay,nq}")]
[System.Diagnostics.CodeAnalysis.SuppressMessage("ApiDesign", "RS0026", Justification = "The .NET pattern: each async select has an overload without and one with preconditions, both ending in an optional CancellationToken; they differ in a required parameter, so no call is ambiguous.")]
public sealed class Alternative
{
    private readonly AlternativeCore _core;

    /// <summary>Creates an alternative over <paramref name="guards"/>.</summary>
    /// <param name="guards">The guards, in priority order for <see cref="PriSelect()"/>. Each guard may appear once.</param>
    /// <exception cref="ArgumentException">The array is empty, holds null, or holds a guard twice.</exception>
    public Alternative(params Guard[] guards)
    {
        ArgumentNullException.ThrowIfNull(guards);
        if (guards.Length == 0)
        {
            throw new ArgumentException("An Alternative needs at least one guard.", nameof(guards));
        }

        var copy = new Guard[guards.Length];
        for (int i = 0; i < guards.Length; i++)
        {
            Guard guard = guards[i] ?? throw new ArgumentException($"Guard {i} is null.", nameof(guards));
            if (Array.IndexOf(copy, guard, 0, i) >= 0)
            {
                throw new ArgumentException($"Guard {i} appears twice in the alternative; use each guard once.", nameof(guards));
            }

            copy[i] = guard;
        }

        _core = new AlternativeCore(copy);
    }

    /// <summary>Blocks until a guard is ready, commits the first ready one in array order and returns its index.</summary>
    /// <returns>The index of the chosen guard.</returns>
    /// <exception cref="PoisonException">The chosen guard is an output guard on a poisoned channel.</exception>
    public int PriSelect() => _core.Select(0, null);

    /// <summary>As <see cref="PriSelect()"/>, considering only guards whose precondition is true.</summary>
    /// <param name="preconditions">One flag per guard.</param>
    /// <returns>The index of the chosen guard.</returns>
    /// <exception cref="ArgumentException">The number of preconditions differs from the number of guards.</exception>
    /// <exception cref="InvalidOperationException">Every precondition is false.</exception>
    public int PriSelect(bool[] preconditions) => _core.Select(0, RequirePreconditions(preconditions));

    /// <summary>Blocks until a guard is ready and commits one fairly: the search starts after the guard chosen last time.</summary>
    /// <returns>The index of the chosen guard.</returns>
    /// <exception cref="PoisonException">The chosen guard is an output guard on a poisoned channel.</exception>
    public int FairSelect() => _core.Select(FairStart(), null);

    /// <summary>As <see cref="FairSelect()"/>, considering only guards whose precondition is true.</summary>
    /// <param name="preconditions">One flag per guard.</param>
    /// <returns>The index of the chosen guard.</returns>
    public int FairSelect(bool[] preconditions) => _core.Select(FairStart(), RequirePreconditions(preconditions));

    /// <summary>Blocks until a guard is ready and commits any ready one.</summary>
    /// <returns>The index of the chosen guard.</returns>
    public int Select() => PriSelect();

    /// <summary>As <see cref="Select()"/>, considering only guards whose precondition is true.</summary>
    /// <param name="preconditions">One flag per guard.</param>
    /// <returns>The index of the chosen guard.</returns>
    public int Select(bool[] preconditions) => PriSelect(preconditions);

    /// <summary>As <see cref="PriSelect()"/>, holding no thread while it waits.</summary>
    /// <param name="cancellationToken">Cancels the wait; a cancelled selection has chosen and consumed nothing.</param>
    /// <returns>The index of the chosen guard.</returns>
    public ValueTask<int> PriSelectAsync(CancellationToken cancellationToken = default) => _core.SelectAsync(0, null, cancellationToken);

    /// <summary>As <see cref="PriSelect(bool[])"/>, holding no thread while it waits.</summary>
    /// <param name="preconditions">One flag per guard.</param>
    /// <param name="cancellationToken">Cancels the wait; a cancelled selection has chosen and consumed nothing.</param>
    /// <returns>The index of the chosen guard.</returns>
    public ValueTask<int> PriSelectAsync(bool[] preconditions, CancellationToken cancellationToken = default) =>
        _core.SelectAsync(0, RequirePreconditions(preconditions), cancellationToken);

    /// <summary>As <see cref="FairSelect()"/>, holding no thread while it waits.</summary>
    /// <param name="cancellationToken">Cancels the wait; a cancelled selection has chosen and consumed nothing.</param>
    /// <returns>The index of the chosen guard.</returns>
    public ValueTask<int> FairSelectAsync(CancellationToken cancellationToken = default) => _core.SelectAsync(FairStart(), null, cancellationToken);

    /// <summary>As <see cref="FairSelect(bool[])"/>, holding no thread while it waits.</summary>
    /// <param name="preconditions">One flag per guard.</param>
    /// <param name="cancellationToken">Cancels the wait; a cancelled selection has chosen and consumed nothing.</param>
    /// <returns>The index of the chosen guard.</returns>
    public ValueTask<int> FairSelectAsync(bool[] preconditions, CancellationToken cancellationToken = default) =>
        _core.SelectAsync(FairStart(), RequirePreconditions(preconditions), cancellationToken);

    /// <summary>As <see cref="Select()"/>, holding no thread while it waits.</summary>
    /// <param name="cancellationToken">Cancels the wait; a cancelled selection has chosen and consumed nothing.</param>
    /// <returns>The index of the chosen guard.</returns>
    public ValueTask<int> SelectAsync(CancellationToken cancellationToken = default) => PriSelectAsync(cancellationToken);

    /// <summary>As <see cref="Select(bool[])"/>, holding no thread while it waits.</summary>
    /// <param name="preconditions">One flag per guard.</param>
    /// <param name="cancellationToken">Cancels the wait; a cancelled selection has chosen and consumed nothing.</param>
    /// <returns>The index of the chosen guard.</returns>
    public ValueTask<int> SelectAsync(bool[] preconditions, CancellationToken cancellationToken = default) =>
        PriSelectAsync(preconditions, cancellationToken);

    private int FairStart() => (_core.LastSelected + 1) % _core.Count;

    private static bool[] RequirePreconditions(bool[] preconditions) =>
        preconditions ?? throw new ArgumentNullException(nameof(preconditions), "Pass one precondition per guard, or call the overload without preconditions.");
}
