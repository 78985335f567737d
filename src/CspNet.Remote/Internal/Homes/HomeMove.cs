using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// One home leaving this program: when its remote operations have stopped (<see cref="Quiet"/>),
/// and how the operations held back meanwhile are answered (<see cref="Released"/>).
/// </summary>
internal sealed class HomeMove
{
    private readonly TaskCompletionSource _quiet = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<string?> _released = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly System.Collections.Concurrent.ConcurrentQueue<Task> _answers = new(); // the held operations' answers

    /// <summary>Completes once no remote operation runs on the home.</summary>
    internal Task Quiet => _quiet.Task;

    /// <summary>
    /// Completes once the move is decided: null, the name moved (held operations are answered
    /// MOVED); otherwise the poison message (no program took the home, which is poisoned).
    /// </summary>
    internal Task<string?> Released => _released.Task;

    internal void SignalQuiet() => _quiet.TrySetResult();

    internal void Release(string? poison) => _released.TrySetResult(poison);

    /// <summary>Keeps the task that answers a held operation, so that the move can wait for the answers to be sent.</summary>
    internal Task Track(Task answering)
    {
        _answers.Enqueue(answering);
        return answering;
    }

    /// <summary>Completes once the answers of the operations held so far have been handed to their streams.</summary>
    internal Task AnswersSent => Task.WhenAll(_answers);
}

/// <summary>A program's answer to a Handover: the incarnation it took the home under (null: it did not), and whether it said nothing within the bound.</summary>
internal readonly record struct HandoverAnswer(string? Taker, bool Silent);

/// <summary>
/// Hands a home that is leaving with its program to a program that holds its ends
/// (docs/DISTRIBUTED.md, "A moving home"): quiesce, offer, move the name, then release the
/// operations held back. If no program takes it, the channel is poisoned, never silently lost.
/// </summary>
internal static partial class HomeMover
{
    internal static async Task HandOverAsync(Home home, IHomeNode node, Func<string, string, CancellationToken, Task<NameEntry>> moveName)
    {
        TimeSpan bound = node.Options.PeerTimeout;
        HomeMove move = home.BeginMove();
        IReadOnlyList<HomeSession> holders = home.Holders;
        string? poison = null;
        try
        {
            // Every remote operation not done yet is cancelled at the core, exactly: it either
            // happened (and is answered as usual) or moved nothing (and is answered MOVED later).
            foreach (HomeSession holder in home.Holders)
            {
                holder.CancelOperationsOn(home);
            }

            // The writers of a buffered channel stop spending credits: every credited value they
            // sent is placed (in order) before the buffer is taken out.
            Task<bool> creditsStopped = StopCreditsAsync(home, bound);

            if (!await WithinAsync(move.Quiet, bound).ConfigureAwait(false))
            {
                // A selection holds a value or a reader here and has not settled within the bound:
                // what it set aside goes back to the channel (its later Settle finds nothing).
                foreach (HomeSession holder in home.Holders)
                {
                    holder.DeclineOperationsOn(home);
                }

                await WithinAsync(move.Quiet, bound).ConfigureAwait(false);
            }

            poison = $"{home.Kind.WireName()} '{home.Name}' is poisoned: its home, {node.ProgramLabel}, left, and no program holding its ends took it over.";
            poison = await OfferAsync(home, node, moveName, await creditsStopped.ConfigureAwait(false)).ConfigureAwait(false);
        }
        finally
        {
            node.Homes.Remove(home);

            // This program's own ends cannot follow the channel: they see it poisoned.
            home.PoisonAsMoved(poison ?? $"{home.Kind.WireName()} '{home.Name}' moved to another program when {node.ProgramLabel} left: the ends of {node.ProgramLabel} cannot follow it.");
            if (poison is not null)
            {
                Log.NotTaken(node.Logger, home.Name);
            }

            move.Release(poison);
        }

        // The held answers leave before this program goes on to close its streams: a client whose
        // operation was answered MOVED follows the move rather than seeing its link end first.
        try
        {
            await move.AnswersSent.WaitAsync(bound).ConfigureAwait(false);

            // Behind the held answers, each client learns how the channel left: an operation its
            // link loses when this program goes follows the move or ends poisoned, never "lost".
            foreach (HomeSession holder in holders)
            {
                holder.TellHomeLeft(home.Name, poison ?? string.Empty);
            }

            await Task.WhenAll(holders.Select(h => h.WhenAnswersWritten())).WaitAsync(bound).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            // A client that does not read its answers: its link ends with the program, as any would.
        }
    }

    /// <summary>
    /// Offers the quiesced home to the programs holding its ends, one at a time, and moves the name
    /// to the first that takes it: null then; otherwise the message the channel is poisoned with.
    /// </summary>
    private static async Task<string?> OfferAsync(Home home, IHomeNode node, Func<string, string, CancellationToken, Task<NameEntry>> moveName, bool creditsStopped)
    {
        TimeSpan bound = node.Options.PeerTimeout;
        string channel = $"{home.Kind.WireName()} '{home.Name}'";
        if (!creditsStopped)
        {
            // A credited value could still be on its way here: the buffer cannot move whole.
            return $"{channel} is poisoned: its home, {node.ProgramLabel}, left, and a program writing to it did not confirm within {bound.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout) that it had stopped writing with credits, so its buffered values could not move.";
        }

        (Protocol.Handover offer, IReadOnlyList<byte[]> values) = home.TakeForHandover(node.ProgramLabel);
        long bytes = values.Sum(v => (long)v.Length);
        long maxBytes = Math.Max(node.Options.MaxBytesPerLink, node.Options.MaxValueSize);
        if (bytes > maxBytes)
        {
            return $"{channel} is poisoned: its home, {node.ProgramLabel}, left, and its {values.Count:N0} buffered values ({bytes:N0} bytes) are more than one link may carry (CspNodeOptions.MaxBytesPerLink, {maxBytes:N0} bytes).";
        }

        foreach (HomeSession holder in home.Holders)
        {
            (string? taker, bool silent) = await holder.OfferHomeAsync(offer, values, bound).ConfigureAwait(false);
            if (taker is null)
            {
                if (silent && values.Count > 0)
                {
                    // It may have installed the values and answer late: offering them again could
                    // let two homes hand out the same value.
                    return $"{channel} is poisoned: its home, {node.ProgramLabel}, left, and {holder.Peer}, offered it with {values.Count:N0} buffered values, said nothing for {bound.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout) before taking it; the channel is not offered again, so that no value is read twice.";
                }

                continue;
            }

            try
            {
                using var call = new CancellationTokenSource(bound);
                await moveName(home.Name, taker, call.Token).ConfigureAwait(false);
                Log.Moved(node.Logger, home.Name, holder.Peer);
                return null;
            }
#pragma warning disable CA1031 // The next program holding ends is offered the home; if none takes it, the channel is poisoned.
            catch (Exception e)
#pragma warning restore CA1031
            {
                Log.MoveFailed(node.Logger, home.Name, holder.Peer, e.Message);
            }
        }

        return $"{channel} is poisoned: its home, {node.ProgramLabel}, left, and no program holding its ends took it over.";
    }

    private static async Task<bool> StopCreditsAsync(Home home, TimeSpan bound)
    {
        bool[] stopped = await Task.WhenAll(home.HoldersByEnd.Where(e => e.Key.GrantsCredits).Select(e => e.Value.StopCreditsAsync(e.Key, bound))).ConfigureAwait(false);
        return stopped.All(s => s);
    }

    private static async Task<bool> WithinAsync(Task task, TimeSpan bound)
    {
        try
        {
            await task.WaitAsync(bound).ConfigureAwait(false);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    private static partial class Log
    {
        [LoggerMessage(20, LogLevel.Information, "The home of '{Name}' moved to {Peer}.")]
        internal static partial void Moved(ILogger logger, string name, string peer);

        [LoggerMessage(21, LogLevel.Warning, "Moving the home of '{Name}' to {Peer} failed: {Reason}")]
        internal static partial void MoveFailed(ILogger logger, string name, string peer, string reason);

        [LoggerMessage(22, LogLevel.Warning, "No program holding ends of '{Name}' took its home over: the channel is poisoned.")]
        internal static partial void NotTaken(ILogger logger, string name);
    }
}
