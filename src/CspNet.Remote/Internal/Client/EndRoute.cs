using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Client;

/// <summary>Where a remote end's operations go now: the link to its construct's home and the end's handle there.</summary>
internal sealed record Route(PeerLink Link, uint Handle);

/// <summary>
/// The route of one remote end, which changes when its channel's home moves to another program
/// (link.proto, Completed MOVED): the end then resolves the name again, attaches at the new home
/// and sends the operation again there.
/// </summary>
/// <remarks>
/// Every operation takes <see cref="Current"/> once and uses that link and handle to the end, so
/// its frames and its answer belong to one stream. Operations that learn of one move together
/// share one new attach (<see cref="FollowAsync"/>).
/// </remarks>
internal sealed class EndRoute(Route first, Func<Route, CancellationToken, Task<Route>>? reattach, string name)
{
    /// <summary>
    /// How many moves one operation follows before it gives up: a home moves once when its program
    /// leaves, so more means homes that keep leaving, and the operation fails as on a lost program.
    /// </summary>
    internal const int MaxMovesPerOperation = 8;

    private readonly Lock _lock = new();
    private Route _current = first;
    private Task<Route>? _following; // the attach at the new home, for the route it replaces
    private Route? _followingFrom;

    internal Route Current => Volatile.Read(ref _current);

    internal PeerLink Link => Current.Link;

    internal uint Handle => Current.Handle;

    /// <summary>Whether the end sends the operation <paramref name="completion"/> ended again at the home the NameServer names now.</summary>
    internal bool Follows(Completion completion) => reattach is not null && completion.MayFollow;

    /// <summary>
    /// <paramref name="completion"/>, or, for an operation lost with the link to a home that said
    /// how the channel left with its program (link.proto, HomeLeft), what that means: the operation
    /// was never performed there (its answer would have come first), so it follows the move
    /// (MOVED), or ends with the channel's poison.
    /// </summary>
    internal Completion Explained(Route at, Completion completion) =>
        completion.Lost is not PeerLostException || at.Link.HomeLeft(name) is not { } poison ? completion
        : poison.Length == 0 ? completion with { Outcome = Protocol.Outcome.Moved, Lost = null, Unsent = false }
        : completion with { Outcome = Protocol.Outcome.Poisoned, Message = poison, Lost = null };

    /// <summary>
    /// The route after a move from <paramref name="from"/>: the current one if another operation
    /// followed the move already, else a new attach at the home the NameServer names now.
    /// </summary>
    /// <exception cref="PeerLostException">This end cannot follow a move, or the new home could not be reached.</exception>
    /// <exception cref="PoisonException">The home left without handing the channel over, and poisoned it (link.proto, HomeLeft).</exception>
    internal async Task<Route> FollowAsync(Route from, int moves, CancellationToken cancellationToken)
    {
        if (reattach is null || moves > MaxMovesPerOperation)
        {
            throw new PeerLostException(
                $"The home of '{name}' moved {(reattach is null ? "away" : $"more than {MaxMovesPerOperation} times during one operation")}, and this end cannot follow it: the operation was not performed. Get the end again from the CspNode getter.");
        }

        Task<Route> following;
        lock (_lock)
        {
            if (!ReferenceEquals(_current, from))
            {
                return _current;
            }

            if (_following is null || !ReferenceEquals(_followingFrom, from) || _following.IsFaulted || _following.IsCanceled)
            {
                // Not tied to one caller's token: the new route serves every operation of the end.
                _followingFrom = from;
                _following = AttachAsync(from);
            }

            following = _following;
        }

        return await following.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Poisons the channel at its home. An end that follows moves asks for an answer and, if the
    /// home moved before it applied the poison, poisons the channel at its new home; others send
    /// the poison without waiting, as before (a lost link throws <see cref="PeerLostException"/>).
    /// </summary>
    internal void Poison()
    {
        Route at = Current;
        if (reattach is null)
        {
            at.Link.Poison(at.Handle);
            return;
        }

        _ = PoisonFollowingAsync(at);
    }

    private async Task PoisonFollowingAsync(Route at)
    {
        for (int moves = 1; ; moves++)
        {
            PendingOp op = at.Link.Begin();
            at.Link.Send(new Protocol.ClientFrame { Poison = new Protocol.Poison { Handle = at.Handle, OpId = op.Id } });
            if (!Follows(Explained(at, await op.Task.ConfigureAwait(false))))
            {
                return;
            }

            try
            {
                at = await FollowAsync(at, moves, CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception e) when (e is PeerLostException or PoisonException)
            {
                return; // the channel's home is lost, or left it poisoned: its parties learn that from their own operations
            }
        }
    }

    private async Task<Route> AttachAsync(Route from)
    {
        if (from.Link.HomeLeft(name) is { Length: > 0 } poison)
        {
            // The home left cleanly without handing the channel over: it is poisoned, not lost.
            throw new PoisonException(poison);
        }

        Route next;
        try
        {
            next = await reattach!(from, CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not PeerLostException and not PoisonException and not OutOfMemoryException)
        {
            throw new PeerLostException($"The home of '{name}' moved from {from.Link.Target}, and attaching at its new home failed: {e.Message}", e);
        }

        lock (_lock)
        {
            if (ReferenceEquals(_current, from))
            {
                Volatile.Write(ref _current, next);
            }

            return _current;
        }
    }
}
