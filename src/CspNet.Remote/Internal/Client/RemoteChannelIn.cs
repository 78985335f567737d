using System;
using System.Buffers;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using CspNet.Internal.Processes;
using CspNet.Remote.Internal.Serialization;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// A reading end whose channel lives in another program (a One2Any or Any2Any reader). A read asks
/// the home to read for it and completes with the value taken there; a cancelled read is cancelled
/// at the home, and if the home had already taken a value, the read returns it instead: nothing is
/// lost.
/// </summary>
/// <remarks>
/// <para>
/// It is a guard that commits asynchronously (docs/GUARD-CONTRACT.md), over the Watch, Reserve and
/// Settle frames of link.proto:
/// </para>
/// <list type="bullet">
/// <item><see cref="TryCommit"/>: true if a value chosen earlier is still held here; otherwise it
/// signals if the newest word from the home says a value was there (the engine then reserves it in
/// its turn, without waiting at the home), and answers false.</item>
/// <item>While the end knows of no value at the home, one Watch is outstanding there; its Ready
/// says a value is there (and signals the enabled site, if any). <see cref="Enable"/> signals at
/// once if a value is known to be there. The watch outlives <see cref="Disable"/>, so that the next
/// selection's scan knows. Every site call is made under the end's lock, which Disable takes too,
/// so none comes after it.</item>
/// <item><see cref="TryReserveAsync"/> sends Reserve (waiting at the home only once enabled) and
/// answers true when Reserved arrives with the value, which stays here. Cancelled, it sends Cancel
/// and still waits for the home's answer; a value set aside anyway is given back (Settle false).</item>
/// <item><see cref="Confirm"/> sends Settle(true), without waiting, and keeps the value for the next
/// read, which returns it once the home has confirmed the take (so a link lost before the home saw
/// Settle fails the read rather than delivering the value here and, given back, there too);
/// <see cref="Release"/> sends Settle(false): the home puts the value back first in line and its
/// writer stays blocked.</item>
/// </list>
/// <para>Like every end, it belongs to one process: the reservation and the held value are the owner's.</para>
/// </remarks>
internal sealed class RemoteChannelIn<T>(EndRoute route, ValueCodec<T> codec, string name) : AltingChannelIn<T>, IDetachableEnd
{
    private readonly HomeReadiness _readiness = new(route, $"Selecting over '{name}'");
    private readonly EndDetachment _detachment = new(route, $"reading end of '{name}'");

    // Owner only: the outstanding reservation, and the value chosen for the next read.
    private PendingOp? _reservation;
    private PeerLink? _reservedOn;  // the link of the reservation (its op_id is that stream's)
    private T? _reservedValue;
    private string? _reservedPoison;
    private bool _holding;
    private T? _held;
    private string? _heldPoison;
    private PendingOp? _commit;    // the accepted reservation, until the home confirms the take

    protected internal override GuardCapabilities Capabilities => GuardCapabilities.CommitsAsynchronously;

    /// <summary>
    /// Detaches the end: a value held at the home for a selection goes back to the channel. A value
    /// a selection already chose is this end's: it must be read first, or it would be lost.
    /// </summary>
    public Task DetachAsync(CancellationToken cancellationToken)
    {
        if (_holding)
        {
            throw new InvalidOperationException(
                $"A selection chose the {this}, and its value is not read yet: read it (Read or ReadAsync) before detaching the end, or it would be lost.");
        }

        Task detaching = _detachment.DetachAsync(cancellationToken);
        _readiness.Detached(_detachment.Disposed(" while a selection waited on it: nothing was taken"));
        return detaching;
    }

    public override T Read()
    {
        if (_holding)
        {
            if (_commit is { } commit)
            {
                _commit = null;
#pragma warning disable RS0030 // A thread process's read of a committed selection: the commit's answer, waited for once.
                CheckCommitted(commit.Task.GetAwaiter().GetResult());
#pragma warning restore RS0030
            }

            return TakeHeld();
        }

        _detachment.ThrowIfDetached();
        ProcessContext.ThrowIfBlockingInAsyncProcess("Read()", "ReadAsync()");
#pragma warning disable RS0030 // The synchronous Read() over ReadAsync() (refused inside async processes above).
        return ReadAsync().AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }

    public override ValueTask<T> ReadAsync(CancellationToken cancellationToken = default)
    {
        if (_holding && _commit is not null)
        {
            return TakeCommittedAsync();
        }

        if (_holding)
        {
            try
            {
                return new ValueTask<T>(TakeHeld());
            }
            catch (PoisonException e)
            {
                return ValueTask.FromException<T>(e);
            }
        }

        return ReadRemoteAsync(cancellationToken);
    }

    private async ValueTask<T> ReadRemoteAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        _detachment.ThrowIfDetached();
        Route at = route.Current;
        Completion completion = route.Explained(at, await ReadAtAsync(at, cancellationToken).ConfigureAwait(false));
        for (int moves = 1; route.Follows(completion) && !cancellationToken.IsCancellationRequested && !_detachment.IsDetached; moves++)
        {
            // The home moved before this read took anything: read at the new home.
            try
            {
                at = await route.FollowAsync(at, moves, cancellationToken).ConfigureAwait(false);
            }
            catch (PeerLostException e)
            {
                // Reported as the read's failure, naming the channel, as a lost link is.
                completion = completion with { Outcome = Outcome.Error, Lost = e };
                break;
            }
            catch (PoisonException e)
            {
                completion = completion with { Outcome = Outcome.Poisoned, Message = e.Message, Lost = null };
                break;
            }

            completion = route.Explained(at, await ReadAtAsync(at, cancellationToken).ConfigureAwait(false));
        }

        try
        {
            if (completion is { Lost: null, Outcome: Outcome.Moved })
            {
                // Cancelled or detached while the home moved: nothing was taken.
                completion = completion with { Outcome = Outcome.Cancelled };
            }

            if (_detachment.CancelledByDetach(completion, cancellationToken))
            {
                throw _detachment.Disposed(" while this read waited: nothing was taken");
            }

            completion.ThrowIfFailed($"Reading from '{name}'", cancellationToken);
            return codec.Read(completion.Value);
        }
        finally
        {
            // The value may live in pooled arrays: decoded, they go back.
            completion.ReleaseValue();
        }
    }

    private static ValueTask<Completion> ReadAtAsync(Route at, CancellationToken cancellationToken)
    {
        PendingOp op = at.Link.Begin(reads: true);
        at.Link.Send(new ClientFrame { Read = new Read { Handle = at.Handle, OpId = op.Id } });
        return at.Link.AwaitAsync(op, cancellationToken);
    }

    public override void Poison()
    {
        _detachment.ThrowIfDetached();
        route.Poison();
    }

    protected internal override bool Prepare(GuardSite site)
    {
        if (!_holding)
        {
            _detachment.ThrowIfDetached();
        }

        return true;
    }

    protected internal override bool TryCommit(GuardSite site)
    {
        if (_holding)
        {
            return true;
        }

        // Committing takes a round trip: say "ready" and the engine reserves this end in its turn
        // (the contract's convention for asynchronous guards). A lost link signals too, so that the
        // reservation reports the loss. Not known ready: a watch finds out for the next selection,
        // or this one's wait.
        _readiness.SignalOrWatch(site, enabling: false);
        return false;
    }

    // The reservation an Enable's signal starts waits at the home, and reports a lost link.
    protected internal override void Enable(GuardSite site) => _readiness.SignalOrWatch(site, enabling: true);

    // The watch stays: what it learns lets the next selection's scan see this end ready, in its turn.
    protected internal override void Disable(GuardSite site) => _readiness.Disable();

    protected internal override async ValueTask<bool> TryReserveAsync(GuardSite site, CancellationToken cancellationToken)
    {
        // Enabled: the other guards can still win meanwhile, so waiting at the home for a value
        // is safe. In the scan nothing else is enabled: ask for a value that is there now.
        bool wait = _readiness.IsEnabled;

        Route at = route.Current;
        PeerLink link = at.Link;
        PendingOp op = link.Begin(reserves: true);
        link.Send(new ClientFrame { Reserve = new Reserve { Handle = at.Handle, OpId = op.Id, Wait = wait } });
        using (cancellationToken.UnsafeRegister(static s => { var (l, id) = ((PeerLink, ulong))s!; l.Cancel(id); }, (link, op.Id)))
        {
            await Task.WhenAny(op.Reserved, op.Task).ConfigureAwait(false);
        }

        if (op.Reserved.IsCompleted)
        {
            T value;
            try
            {
                value = codec.Read(await op.Reserved.ConfigureAwait(false)); // completed: no wait
            }
            catch
            {
                link.Settle(op.Id, accept: false);
                throw;
            }
            finally
            {
                op.ReleaseReserved(); // decoded: its pooled arrays go back
            }

            if (cancellationToken.IsCancellationRequested)
            {
                // The value came although the selection gave up: give it back before saying "nothing reserved".
                link.Settle(op.Id, accept: false);
                return false;
            }

            _reservation = op;
            _reservedOn = link;
            _reservedValue = value;
            return true;
        }

        Completion completion = route.Explained(at, await op.Task.ConfigureAwait(false));
        if (_detachment.CancelledByDetach(completion, cancellationToken))
        {
            throw _detachment.Disposed(" while its selection waited: nothing was taken");
        }

        if (route.Follows(completion))
        {
            // Nothing was set aside, and the home moved: watch (and reserve) at the new home.
            if (!cancellationToken.IsCancellationRequested)
            {
                await route.FollowAsync(at, 1, cancellationToken).ConfigureAwait(false);
                _readiness.NotReady();
            }

            return false;
        }

        if (_readiness.EndedUnreserved(completion, cancellationToken, out string? poison))
        {
            _reservedPoison = poison;
            return true;
        }

        return false;
    }

    protected internal override void Confirm(GuardSite site)
    {
        if (_reservation is { } op)
        {
            _reservation = null;
            if (_detachment.IsDetached)
            {
                // The home gave the value back when the end detached: taking it here would deliver it twice.
                _reservedValue = default;
                throw _detachment.Disposed(" while its selection held a value at the home: the value went back to the channel");
            }

            PeerLink link = _reservedOn!;
            _reservedOn = null;
            if (link.IsFailed)
            {
                // The home gives a reservation back when its stream ends, and Settle can no longer
                // reach it: keeping the value would deliver it twice. The selection throws instead.
                _reservedValue = default;
                throw new PeerLostException($"Lost the link to {link.Target} while selecting over '{name}': the value set aside there was given back, not taken.");
            }

            link.Settle(op.Id, accept: true);
            Hold(_reservedValue, poison: null);
            _reservedValue = default;

            // The value is handed to the reader only once the home confirms the take: if the link
            // broke before Settle arrived, the home gives the value back to the channel, and
            // handing it out here too would deliver it twice.
            _commit = op;
        }
        else if (_reservedPoison is { } poison)
        {
            _reservedPoison = null;
            Hold(default, poison);
        }

        // Otherwise TryCommit found a value held already: it stays for the next read.
    }

    protected internal override void Release(GuardSite site)
    {
        if (_reservation is { } op)
        {
            _reservation = null;
            _reservedValue = default;
            PeerLink link = _reservedOn!;
            _reservedOn = null;
            if (!_detachment.IsDetached)
            {
                link.Settle(op.Id, accept: false);
            }
        }

        _reservedPoison = null;
    }

    private void Hold(T? value, string? poison)
    {
        _held = value;
        _heldPoison = poison;
        _holding = true;
    }

    private async ValueTask<T> TakeCommittedAsync()
    {
        PendingOp commit = _commit!;
        _commit = null;
        CheckCommitted(await commit.Task.ConfigureAwait(false));
        return TakeHeld();
    }

    /// <summary>
    /// Fails the read when the home did not confirm the take. A link lost in that window leaves the
    /// value's fate unknown here (the home gives it back unless Settle arrived first): the reader is
    /// told, and the value is never delivered twice.
    /// </summary>
    private void CheckCommitted(Completion completion)
    {
        if (completion.Lost is null && completion.Outcome == Outcome.Ok)
        {
            return;
        }

        _holding = false;
        _held = default;
        _heldPoison = null;
        if (completion.Lost is { } lost)
        {
            throw new PeerLostException(
                $"Lost the link to {route.Link.Target} before it confirmed the take of the value chosen from '{name}': the value is not delivered here, so it cannot be delivered twice.",
                lost);
        }

        completion.ThrowIfFailed($"Taking the value chosen from '{name}'", CancellationToken.None);
        throw new InvalidOperationException($"The home of '{name}' did not confirm the take ({completion.Outcome}).");
    }

    private T TakeHeld()
    {
        _holding = false;
        T value = _held!;
        _held = default;
        if (_heldPoison is { } poison)
        {
            _heldPoison = null;
            throw new PoisonException(poison);
        }

        return value;
    }

    public override string ToString() => $"reading end of '{name}' at {route.Link.Target}";
}
