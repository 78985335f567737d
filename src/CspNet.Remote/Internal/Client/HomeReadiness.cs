using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// What a remote end that is a guard knows of its home's readiness (docs/GUARD-CONTRACT.md): the
/// newest word from the home (a Ready), the one Watch kept outstanding there while the end knows of
/// nothing, and the enabled selection's site to signal. Every site call is made under the lock,
/// which <see cref="Disable"/> takes too, so none comes after it.
/// </summary>
/// <remarks>
/// The watch outlives the selection that started it: what it learns lets the next selection's scan
/// see the end ready in its turn (a watch per selection would leave the end unknown in every scan,
/// and a local guard that is always ready would win every <c>FairSelect</c>).
/// </remarks>
internal sealed class HomeReadiness(EndRoute route, string what)
{
    private readonly Lock _lock = new();
    private GuardSite? _site;      // the enabled selection's site, under _lock
    private PendingOp? _watch;     // the watch at the home, while nothing is known there; under _lock
    private bool _knownReady;      // the newest word from the home: it was ready
    private Exception? _detached;  // the end was detached: every selection on it fails with this

    /// <summary>
    /// The scan (<paramref name="enabling"/> false) or Enable: signals if the home is known ready,
    /// or <paramref name="readyHere"/> (the end can commit without the home), or the link is lost
    /// (the reservation the signal starts reports it); otherwise keeps a watch at the home.
    /// </summary>
    internal void SignalOrWatch(GuardSite site, bool enabling, bool readyHere = false)
    {
        lock (_lock)
        {
            if (enabling)
            {
                _site = site;
            }

            if (_detached is { } detached)
            {
                site.Fail(detached);
            }
            else if (_knownReady || readyHere || route.Link.IsFailed)
            {
                site.Signal();
            }
            else
            {
                EnsureWatchLocked();
            }
        }
    }

    /// <summary>Whether a reservation may wait at the home: only while the selection is enabled (the other guards can still win).</summary>
    internal bool IsEnabled
    {
        get
        {
            lock (_lock)
            {
                return _site is not null;
            }
        }
    }

    internal void Disable()
    {
        lock (_lock)
        {
            _site = null;
        }
    }

    /// <summary>The end was detached: a selection waiting on it fails with <paramref name="failure"/> (its watch at the home was cancelled there).</summary>
    internal void Detached(Exception failure)
    {
        lock (_lock)
        {
            _detached = failure;
            _site?.Fail(failure);
        }
    }

    /// <summary>The home had nothing after all: forget it was ready and watch again.</summary>
    internal void NotReady()
    {
        lock (_lock)
        {
            _knownReady = false;
            EnsureWatchLocked();
        }
    }

    /// <summary>
    /// A reservation the home answered without setting anything aside: true (commit, the operation
    /// will throw) with the poison message if the channel is poisoned; false if the home had nothing
    /// (the end watches again, unless the selection gave up); a failure throws.
    /// </summary>
    internal bool EndedUnreserved(Completion completion, CancellationToken cancellationToken, out string? poison)
    {
        poison = null;
        switch (completion.Lost is null ? completion.Outcome : Outcome.Error)
        {
            case Outcome.Cancelled:
                if (!cancellationToken.IsCancellationRequested)
                {
                    NotReady();
                }

                return false;
            case Outcome.Poisoned:
                // As a local end: a poisoned channel commits the guard, and the operation throws.
                poison = completion.Message;
                return true;
            default:
                completion.ThrowIfFailed(what, cancellationToken);
                return false;
        }
    }

    private void EnsureWatchLocked()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "EnsureWatchLocked is called under the readiness lock.");
        Route at = route.Current;
        if (_watch is not null || at.Link.IsFailed)
        {
            return;
        }

        PendingOp watch = at.Link.Begin();
        watch.OnReady = () => OnReady(watch);
        _watch = watch;
        at.Link.Send(new ClientFrame { Watch = new Watch { Handle = at.Handle, OpId = watch.Id } });
        _ = WatchEndedAsync(watch, at);
    }

    private void OnReady(PendingOp watch)
    {
        lock (_lock)
        {
            if (_watch == watch)
            {
                _watch = null;
            }

            _knownReady = true;
            _site?.Signal();
        }
    }

    /// <summary>A watch that ends in failure (the link lost, a home that refuses) fails the selection it serves.</summary>
    private async Task WatchEndedAsync(PendingOp watch, Route at)
    {
        Completion completion = route.Explained(at, await watch.Task.ConfigureAwait(false));
        Exception? failure = null;
        bool moved = route.Follows(completion);
        if (moved)
        {
            // The home moved before anything was ready: the end watches at the new home.
            try
            {
                await route.FollowAsync(at, 1, CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception e) when (e is PeerLostException or PoisonException)
            {
                failure = e;
            }
        }
        else if (completion.Lost is not null || completion.Outcome is not (Outcome.Ok or Outcome.Cancelled or Outcome.Poisoned))
        {
            try
            {
                completion.ThrowIfFailed(what, CancellationToken.None);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                failure = e;
            }
        }

        lock (_lock)
        {
            if (_watch == watch)
            {
                _watch = null;
            }

            if (failure is not null)
            {
                _site?.Fail(failure);
            }
            else if (moved && _detached is null)
            {
                EnsureWatchLocked();
            }
        }
    }
}
