using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;
using CspNet.Remote.Protocol;

namespace CspNet.Remote;

// A live move of a channel's home (docs/DISTRIBUTED.md, "A moving home"): this program asks the
// home for a channel it holds ends of, and this program's own ends at a home follow the channel
// when another program takes it.
public sealed partial class CspNode
{
    // The following ends each home hosted here gave this program's processes, switched together when it moves away live.
    private readonly ConditionalWeakTable<Home, LocalFollowers> _followers = new();

    /// <summary>
    /// Makes this program the home of the named channel, while every program goes on using it: the
    /// current home stops the operations waiting on the channel (each exactly: it happened, or it
    /// moved nothing), hands the channel to this program, moves the name here, and its own ends go
    /// on as remote ends; every other end follows the name. No value is lost or duplicated.
    /// Use it so that the program that reads (or writes) most holds the channel it uses.
    /// </summary>
    /// <param name="name">The channel's name. This program must hold ends of it (got from this node's getters).</param>
    /// <param name="cancellationToken">Gives up. A cancellation that reaches the home before it offers the channel (also while it waits for the operations to stop) moves nothing; after that, the move completes.</param>
    /// <returns>Completes once the NameServer names this program as the channel's home (at once if it is already).</returns>
    /// <remarks>
    /// An Any2Any or One2Any channel moves, unbuffered or with a <see cref="FifoBuffer{T}"/>,
    /// <see cref="InfiniteBuffer{T}"/> or <see cref="OverwriteOldestBuffer{T}"/>: its buffered values
    /// move in order, its writers stop spending credits first, and a One2Any's single writing end
    /// stays its creator's. A buffer of your own <see cref="IBuffer{T}"/>, a One2One and an Any2One
    /// stay with their home. Operations on the channel pause during the move (a few round trips); a selection waiting on an end at the old home scans again and waits at the
    /// new one. Ends that began an operation before the move follow it at most
    /// <c>8</c> times per operation. Not for a channel created with <c>local: true</c>. This
    /// program's ends got before the move stay remote ends, reaching the channel here over a link to
    /// this program: get them again from the getters for local ends.
    /// </remarks>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty.</exception>
    /// <exception cref="InvalidOperationException">This program holds no end of an Any2Any or One2Any channel of that name, or is stand-alone; or the home refused (the message says why: another move under way, the channel's kind or buffer, a writer that did not confirm it stopped spending credits).</exception>
    /// <exception cref="OperationCanceledException">Cancelled before the home offered the channel: nothing moved.</exception>
    /// <exception cref="PeerLostException">The home could not be reached.</exception>
    public async Task BecomeHomeAsync(string name, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (_runtime.Homes.TryGetValue(name, out _))
        {
            return; // hosted here already
        }

        if (_names is null || _links is null)
        {
            throw new InvalidOperationException($"{ProgramLabel} is stand-alone: each of its channels lives in it already, and none moves.");
        }

        if (!_takeable.ContainsKey(name))
        {
            throw new InvalidOperationException(
                $"{ProgramLabel} holds no end of a channel named '{name}' that could move here: get an end of it first (an Any2Any or One2Any end from this node's getters), then call BecomeHomeAsync.");
        }

        NameRecord record = await _names.ResolveRecordAsync(name, cancellationToken).ConfigureAwait(false);
        PeerLink link = await _links.GetAsync(record.Host, record.Port, cancellationToken).ConfigureAwait(false);
        PendingOp op = link.Begin();
        link.Send(new ClientFrame { BecomeHome = new BecomeHome { Name = name, OpId = op.Id } });
        Completion answer = await link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
        answer.ThrowIfFailed($"Becoming the home of '{name}'", cancellationToken);
        link.ConfirmTake(name); // the old home moved the name here before it answered
    }

    /// <summary>The constructs this program hosts now, by name (for diagnostics and tests).</summary>
    internal HomeDirectory HostedHomes => _runtime.Homes;

    /// <summary>Hands a channel hosted here to the program that asked for it (link.proto, BecomeHome).</summary>
    private Task GiveHomeAsync(Home home, HomeSession taker, CancellationToken cancellationToken) =>
        HomeMover.GiveAsync(home, taker, _runtime, FollowersOf(home), (name, to, ct) => _names!.MoveAsync(name, to, ct), cancellationToken);

    private LocalFollowers FollowersOf(Home home) => _followers.GetValue(home, static _ => new LocalFollowers());

    /// <summary>
    /// The end a process of this program gets at a channel hosted here: the core's own end, or for a
    /// channel that may move away live (an Any2Any or One2Any that other programs can reach) one that
    /// follows it (<see cref="FollowingChannelIn{T}"/>). <paramref name="attach"/> is null where nothing remote reaches the channel.
    /// </summary>
    private object Following<T>(ChannelHome<T> home, object end, Func<CancellationToken, Task<object>>? attach)
    {
        if (attach is null || !home.CanFollow)
        {
            return end;
        }

        TimeSpan bound = _runtime.Options.PeerTimeout;
        IFollowingEnd following = end switch
        {
            ChannelReadEnd<T> reader => new FollowingChannelIn<T>(reader, async ct => (AltingChannelIn<T>)await attach(ct).ConfigureAwait(false), home.Name, bound),
            ChannelWriteEnd<T> writer => new FollowingChannelOut<T>(writer, async ct => (AltingChannelOut<T>)await attach(ct).ConfigureAwait(false), home.Name, bound),
            _ => throw new InvalidOperationException($"Unexpected end type {end.GetType().Name} of '{home.Name}'."),
        };
        FollowersOf(home).Add(following);
        return following;
    }

    /// <summary>Attaches one of this program's own ends at the channel's new home, after it moved away from here.</summary>
    private async Task<object> AttachFollowerAsync(EndRequest request, Func<PeerLink, uint, object> remoteEnd, CancellationToken cancellationToken)
    {
        Route route = await AttachAtNamedHomeAsync(request, from: null, cancellationToken).ConfigureAwait(false);
        return remoteEnd(route.Link, route.Handle);
    }
}
