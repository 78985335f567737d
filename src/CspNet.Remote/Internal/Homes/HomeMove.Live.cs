using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Internal.Homes;

// A live move (docs/DISTRIBUTED.md, "A moving home"): a program holding ends of a channel asks its
// home for it (link.proto, BecomeHome), and the home hands it over while it goes on running.
internal static partial class HomeMover
{
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
        if (!home.CanMoveLive)
        {
            throw new InvalidOperationException($"{home.Kind.WireName()} '{home.Name}' cannot move while its home runs: only an unbuffered Any2Any channel that other programs hold ends of moves live (a buffered one moves when its home leaves).");
        }

        cancellationToken.ThrowIfCancellationRequested();
        TimeSpan bound = node.Options.PeerTimeout;
        HomeMove move = home.TryBeginMove() ?? throw new InvalidOperationException($"The home of '{home.Name}' is moving already.");
        bool moved = false;
        try
        {
            await QuiesceAsync(home, move, bound).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();

            // This program's own ends stop at the core too (each exactly) before the channel is described.
            followers.BeginMove();
            Protocol.Handover offer = home.DescribeForHandover();
            string incarnation = (await taker.OfferHomeAsync(offer, [], bound).ConfigureAwait(false)).Taker
                ?? throw new InvalidOperationException($"{taker.Peer} did not take the home of '{home.Name}' within {bound.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout): it stays in {node.ProgramLabel}.");
            using (var call = new CancellationTokenSource(bound))
            {
                await moveName(home.Name, incarnation, call.Token).ConfigureAwait(false);
            }

            moved = true;
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
                followers.Stay();
                home.EndMove(move);
            }

            // Moved or not, the operations held back are answered MOVED: their ends attach again
            // wherever the NameServer names the channel, and send them there.
            move.Release(null);
        }
    }

    /// <summary>Stops every remote operation on the home, each exactly; what a slow selection set aside goes back after the bound.</summary>
    private static async Task QuiesceAsync(Home home, HomeMove move, TimeSpan bound)
    {
        foreach (HomeSession holder in home.Holders)
        {
            holder.CancelOperationsOn(home);
        }

        if (await WithinAsync(move.Quiet, bound).ConfigureAwait(false))
        {
            return;
        }

        foreach (HomeSession holder in home.Holders)
        {
            holder.DeclineOperationsOn(home);
        }

        if (!await WithinAsync(move.Quiet, bound).ConfigureAwait(false))
        {
            throw new InvalidOperationException($"Operations on '{home.Name}' did not stop within {bound.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout): the home stays.");
        }
    }
}
