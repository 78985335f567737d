using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Internal.Homes;

// A live move (docs/DISTRIBUTED.md, "A moving home"): a program holding ends of a channel asks its
// home for it (link.proto, BecomeHome), and the home hands it over while it goes on running.
internal static partial class HomeMover
{
    /// <summary>Tests only, by channel name: called when a live move of that home has begun (its quiesce starts).</summary>
    internal static System.Collections.Concurrent.ConcurrentDictionary<string, Action> MoveBeganForTests { get; } = new(StringComparer.Ordinal);

    /// <summary>
    /// Hands <paramref name="home"/> to the program at the other end of <paramref name="taker"/>:
    /// quiesce, offer to it alone, move the name, switch this program's own ends to the new home,
    /// then release the operations held back (MOVED). Cancelled or refused before the name moved,
    /// nothing moves: the home goes on here, and the held operations run again here.
    /// </summary>
    /// <exception cref="InvalidOperationException">The channel cannot move, a move is under way, or the taker did not take it.</exception>
    /// <exception cref="OperationCanceledException">Cancelled before the offer: nothing moved.</exception>
    internal static async Task GiveAsync(
        Home home,
        HomeSession taker,
        IHomeNode node,
        LocalFollowers followers,
        Func<string, string, CancellationToken, Task<NameEntry>> moveName,
        CancellationToken cancellationToken)
    {
        if (home.LiveMoveRefusal is { } refusal)
        {
            throw new InvalidOperationException($"{home.Kind.WireName()} '{home.Name}' cannot move while its home runs: {refusal}");
        }

        cancellationToken.ThrowIfCancellationRequested();
        TimeSpan bound = node.Options.PeerTimeout;
        HomeMove move = home.TryBeginMove() ?? throw new InvalidOperationException($"The home of '{home.Name}' is moving already.");
        if (MoveBeganForTests.TryGetValue(home.Name, out Action? began))
        {
            began();
        }

        bool moved = false;
        bool stopped = false; // this program's own ends were stopped at the core
        try
        {
            // As when the home leaves: the remote operations stop at the core, and the writers stop
            // spending credits, so every credited value is placed before the buffer is taken out.
            Task<bool> creditsStopped = StopCreditsAsync(home, bound);
            await QuiesceAsync(home, move, bound, cancellationToken).ConfigureAwait(false);
            if (!await creditsStopped.WaitAsync(cancellationToken).ConfigureAwait(false))
            {
                throw new InvalidOperationException($"A program writing to '{home.Name}' did not confirm within {bound.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout) that it had stopped writing with credits: the home stays in {node.ProgramLabel}.");
            }

            cancellationToken.ThrowIfCancellationRequested();

            // This program's own ends stop at the core too (each exactly) before the channel is described.
            followers.BeginMove();
            stopped = true;
            moved = await OfferLiveAsync(home, taker, node, moveName).ConfigureAwait(false);
            node.Homes.Remove(home);

            // Attached at the new home before the held operations learn of the move, so that none of
            // this program's operations waits behind theirs there.
            await followers.FollowAsync().ConfigureAwait(false);
            Log.Moved(node.Logger, home.Name, taker.Peer);
        }
        finally
        {
            if (!moved)
            {
                if (stopped)
                {
                    // Only ends that were stopped start a new stretch: one that was not has local
                    // operations under way whose token the next move must still cancel.
                    followers.Stay();
                }

                home.EndMove(move);
            }

            // Moved or not, the operations held back are answered MOVED: their ends attach again
            // wherever the NameServer names the channel, and send them there.
            move.Release(null);
        }
    }

    /// <summary>
    /// Takes the quiet channel out (its buffered values in order), offers it to the taker alone and
    /// moves the name: true. If the taker refuses, the values go back and the home stays (throws).
    /// </summary>
    private static async Task<bool> OfferLiveAsync(Home home, HomeSession taker, IHomeNode node, Func<string, string, CancellationToken, Task<NameEntry>> moveName)
    {
        TimeSpan bound = node.Options.PeerTimeout;
        (Protocol.Handover offer, IReadOnlyList<byte[]> values) = home.TakeForLiveMove();
        long bytes = values.Sum(v => (long)v.Length);
        long maxBytes = Math.Max(node.Options.MaxBytesPerLink, node.Options.MaxValueSize);
        if (bytes > maxBytes)
        {
            home.Restore(values);
            throw new InvalidOperationException($"The {values.Count:N0} values buffered in '{home.Name}' ({bytes:N0} bytes) are more than one link may carry (CspNodeOptions.MaxBytesPerLink, {maxBytes:N0} bytes): the home stays in {node.ProgramLabel}. Ask again when fewer are buffered.");
        }

        (string? incarnation, bool silent) = await taker.OfferHomeAsync(offer, values, bound).ConfigureAwait(false);
        if (incarnation is null)
        {
            if (silent && values.Count > 0)
            {
                // It may have installed the values and answer late: keeping them here too could let
                // two homes hand out the same value.
                home.PoisonAsMoved($"{home.Kind.WireName()} '{home.Name}' is poisoned: {taker.Peer}, offered it with {values.Count:N0} buffered values, said nothing for {bound.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout) before taking it, so they may be there; the home keeps none of them, so that no value is read twice.");
            }
            else
            {
                home.Restore(values);
            }

            throw new InvalidOperationException($"{taker.Peer} did not take the home of '{home.Name}' within {bound.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout): it stays in {node.ProgramLabel}.");
        }

        try
        {
            using var call = new CancellationTokenSource(bound);
            await moveName(home.Name, incarnation, call.Token).ConfigureAwait(false);
        }
        catch when (values.Count > 0)
        {
            // The taker holds the values now: the home here must not hand them out again.
            home.PoisonAsMoved($"{home.Kind.WireName()} '{home.Name}' is poisoned: its buffered values moved to {taker.Peer}, and the NameServer did not move the name there.");
            throw;
        }

        return true;
    }

    /// <summary>Stops every remote operation on the home, each exactly; what a slow selection set aside goes back after the bound.</summary>
    /// <remarks>Cancellation is honoured while it waits: nothing has moved yet, and the home goes on.</remarks>
    private static async Task QuiesceAsync(Home home, HomeMove move, TimeSpan bound, CancellationToken cancellationToken)
    {
        foreach (HomeSession holder in home.Holders)
        {
            holder.CancelOperationsOn(home);
        }

        if (await WithinAsync(move.Quiet.WaitAsync(cancellationToken), bound).ConfigureAwait(false))
        {
            return;
        }

        foreach (HomeSession holder in home.Holders)
        {
            holder.DeclineOperationsOn(home);
        }

        if (!await WithinAsync(move.Quiet.WaitAsync(cancellationToken), bound).ConfigureAwait(false))
        {
            throw new InvalidOperationException($"Operations on '{home.Name}' did not stop within {bound.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout): the home stays.");
        }
    }
}
