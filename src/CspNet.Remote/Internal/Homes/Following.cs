using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;

namespace CspNet.Remote.Internal.Homes;

/// <summary>An end of this program at a channel's home that follows the channel when its home moves away while this program goes on.</summary>
internal interface IFollowingEnd
{
    /// <summary>The move begins: operations waiting at the home's core channel stop (each exactly: it happened, or moved nothing), new ones wait.</summary>
    void BeginMove();

    /// <summary>The move did not happen: operations go on at the core channel.</summary>
    void Stay();

    /// <summary>The channel moved: attaches this end at the new home; operations go on there. Never throws: a failure is every later operation's.</summary>
    Task FollowAsync();
}

/// <summary>
/// Where a following end's operations go: the core channel of the home here (local), nowhere yet
/// (the home is moving: they wait), or the end attached at the new home (remote). Shared by the
/// reading and writing following ends.
/// </summary>
/// <remarks>
/// A local operation runs on the core channel with <see cref="LocalToken"/>, which the move
/// cancels: the core's cancellation is exact, so the operation either happened or moved nothing,
/// and then runs again where <see cref="RunAsync"/> finds the channel. A selection enabled on the end is
/// signalled at each change (<see cref="Guard.CapabilitiesChange"/>): its next scan uses the new place.
/// </remarks>
internal sealed class FollowingState<TEnd>(Func<CancellationToken, Task<TEnd>> attach, string name)
    where TEnd : class
{
    internal const int Local = 0;
    internal const int Moving = 1;
    internal const int Remote = 2;

    private readonly Lock _lock = new();
    private Epoch _epoch = new();
    private int _state;
    private TEnd? _remote;
    private Exception? _failure;
    private GuardSite? _enabledSite;

    internal int State => Volatile.Read(ref _state);

    /// <summary>The end at the new home, once moved; null before or if attaching there failed.</summary>
    internal TEnd? RemoteEnd => Volatile.Read(ref _remote);

    /// <summary>Why this end cannot follow its channel (attaching at the new home failed); null otherwise.</summary>
    internal Exception? Failure => Volatile.Read(ref _failure);

    /// <summary>The token of local operations: cancelled when the channel begins to move.</summary>
    internal CancellationToken LocalToken => Volatile.Read(ref _epoch).Stop.Token;

    /// <summary>Serialises a poison at the core with the start of a move, so that the move describes the channel after it.</summary>
    internal Lock PoisonLock => _lock;

    /// <summary>The current stretch of local operations.</summary>
    internal Epoch Current => Volatile.Read(ref _epoch);

    /// <summary>
    /// Runs an operation wherever the channel is: <paramref name="started"/> (when
    /// <paramref name="epoch"/> is not null) is a local one already under way; an operation the move
    /// stopped at the core (it moved nothing) runs again at the new home, or locally again if the
    /// move did not happen.
    /// </summary>
    internal async ValueTask<TResult> RunAsync<TArg, TResult>(
        ValueTask<TResult> started,
        Epoch? epoch,
        TArg argument,
        Func<TArg, CancellationToken, ValueTask<TResult>> local,
        Func<TEnd, TArg, CancellationToken, ValueTask<TResult>> remote,
        CancellationToken cancellationToken)
    {
        while (true)
        {
            CancellationTokenSource? linked = null;
            try
            {
                if (epoch is null)
                {
                    if (await WhereAsync(cancellationToken).ConfigureAwait(false) is { } moved)
                    {
                        return await remote(moved, argument, cancellationToken).ConfigureAwait(false);
                    }

                    lock (_lock)
                    {
                        if (State != Local)
                        {
                            continue; // the move began since: go where it goes
                        }

                        // Started under the lock, so that none starts at the core once a move has begun.
                        epoch = Current;
                        linked = cancellationToken.CanBeCanceled ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, epoch.Stop.Token) : null;
                        started = local(argument, linked?.Token ?? epoch.Stop.Token);
                    }
                }

                try
                {
                    return await started.ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (epoch.Stop.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
                {
                    // Stopped at the core by the move: it moved nothing.
                }
            }
            finally
            {
                linked?.Dispose();
            }

            if (await epoch.Next.Task.WaitAsync(cancellationToken).ConfigureAwait(false) is { } next)
            {
                return await remote(next, argument, cancellationToken).ConfigureAwait(false);
            }

            epoch = null; // the move did not happen: run locally again
        }
    }

    /// <summary>The end at the new home for an operation that starts while the channel is moving or moved; null: run locally.</summary>
    internal async ValueTask<TEnd?> WhereAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            Epoch epoch = Current;
            switch (State)
            {
                case Local:
                    return null;
                case Remote:
                    return RemoteEnd ?? throw Failure!;
                default:
                    if (await epoch.Next.Task.WaitAsync(cancellationToken).ConfigureAwait(false) is { } moved)
                    {
                        return moved;
                    }

                    break;
            }
        }
    }

    /// <summary>
    /// Starts an operation at the core unless a move has begun (false then): once
    /// <see cref="BeginMove"/> returns, no operation is part-way into the core, so the home can take
    /// the buffered values out knowing none arrives after.
    /// </summary>
    internal bool TryStartLocal<TArg, TResult>(TArg argument, Func<TArg, Epoch, TResult> start, out TResult started, out Epoch epoch)
    {
        lock (_lock)
        {
            epoch = Current;
            if (State != Local)
            {
                started = default!;
                return false;
            }

            started = start(argument, epoch);
            return true;
        }
    }

    internal void BeginMove()
    {
        lock (_lock)
        {
            Interlocked.Exchange(ref _state, Moving);
        }

        Volatile.Read(ref _epoch).Stop.Cancel();
        SignalSelection();
    }

    internal void Stay()
    {
        Epoch over = Volatile.Read(ref _epoch);
        Volatile.Write(ref _epoch, new Epoch());
        Interlocked.Exchange(ref _state, Local);
        over.Next.TrySetResult(null);
        SignalSelection();
    }

    internal async Task FollowAsync(TimeSpan bound)
    {
        Epoch epoch = Volatile.Read(ref _epoch);
        try
        {
            using var bounded = new CancellationTokenSource(bound);
            TEnd remote = await attach(bounded.Token).ConfigureAwait(false);
            Volatile.Write(ref _remote, remote);
            Interlocked.Exchange(ref _state, Remote);
            epoch.Next.TrySetResult(remote);
        }
#pragma warning disable CA1031 // Not swallowed: every operation of the end throws it from now on.
        catch (Exception e)
#pragma warning restore CA1031
        {
            var lost = new PeerLostException($"The home of '{name}' moved from this program, and this program's end could not attach at its new home: {e.Message} Get the end again from the CspNode getter.", e);
            Volatile.Write(ref _failure, lost);
            Interlocked.Exchange(ref _state, Remote);
            epoch.Next.TrySetException(lost);
        }

        SignalSelection();
    }

    /// <summary>A selection stops waiting on the end.</summary>
    internal void Disabled() => Interlocked.Exchange(ref _enabledSite, null);

    /// <summary>
    /// Enables a selection's guard on <paramref name="on"/>, where its scan went (null: nowhere yet);
    /// if the channel's place changed since (<paramref name="place"/>), the selection scans again.
    /// </summary>
    internal void Enable(GuardSite site, TEnd? on, Func<TEnd?> place, Action<TEnd, GuardSite> enable)
    {
        Interlocked.Exchange(ref _enabledSite, site);
        if (on is null && Failure is { } failure)
        {
            site.Fail(failure);
            return;
        }

        if (on is not null)
        {
            enable(on, site);
        }

        if (!ReferenceEquals(on, place()))
        {
            site.Signal(); // the channel began to move, or moved, since this scan began: scan again
        }
    }

    /// <summary>Poisons the channel where it is: at the core while it is here, else at its new home once it is attached there.</summary>
    internal void Poison(Action poisonCore, Action<TEnd> poisonRemote)
    {
        lock (_lock)
        {
            if (State == Local)
            {
                poisonCore();
                return;
            }
        }

        _ = PoisonWhereItIsAsync(poisonCore, poisonRemote);
    }

    private async Task PoisonWhereItIsAsync(Action poisonCore, Action<TEnd> poisonRemote)
    {
        try
        {
            if (await WhereAsync(CancellationToken.None).ConfigureAwait(false) is { } remote)
            {
                poisonRemote(remote);
            }
            else
            {
                Poison(poisonCore, poisonRemote);
            }
        }
        catch (PeerLostException)
        {
            // The end could not follow its channel: its operations say so.
        }
    }

    /// <summary>A selection waiting on the end scans again: the end's place changed.</summary>
    private void SignalSelection() => Volatile.Read(ref _enabledSite)?.Signal();

    /// <summary>One stretch of local operations: cancelled when a move begins, and then told where they go next.</summary>
    internal sealed class Epoch
    {
        internal CancellationTokenSource Stop { get; } = new();

        internal TaskCompletionSource<TEnd?> Next { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}

/// <summary>The following ends of one home's channel in this program: switched together when the home moves away live.</summary>
internal sealed class LocalFollowers
{
    private readonly Lock _lock = new();
    private readonly List<IFollowingEnd> _ends = [];
    private bool _moving;
    private bool _moved;

    /// <summary>Adds an end made at the home; one made after the move began follows at once.</summary>
    internal void Add(IFollowingEnd end)
    {
        bool moved;
        lock (_lock)
        {
            _ends.Add(end);
            if (!_moving)
            {
                return;
            }

            moved = _moved;
        }

        end.BeginMove();
        if (moved)
        {
            _ = end.FollowAsync();
        }
    }

    internal void BeginMove()
    {
        foreach (IFollowingEnd end in Snapshot(moving: true))
        {
            end.BeginMove();
        }
    }

    internal void Stay()
    {
        foreach (IFollowingEnd end in Snapshot(moving: false))
        {
            end.Stay();
        }
    }

    /// <summary>Attaches every end at the new home; completes when each is attached (or failed).</summary>
    internal Task FollowAsync()
    {
        List<Task> following = [];
        lock (_lock)
        {
            _moved = true;
            foreach (IFollowingEnd end in _ends)
            {
                following.Add(end.FollowAsync());
            }
        }

        return Task.WhenAll(following);
    }

    private IFollowingEnd[] Snapshot(bool moving)
    {
        lock (_lock)
        {
            _moving = moving;
            return [.. _ends];
        }
    }
}
