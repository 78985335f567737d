using CspNet.Alternation;

namespace CspNet.Tests.Alternation.Contract;

/// <summary>
/// A reading end of a simulated remote channel, built on the public guard contract only: the
/// worked example of docs/GUARD-CONTRACT.md. Its <see cref="RemotePeer{T}"/> (the writer's host)
/// pushes readiness to it through a <see cref="Latency"/>; taking an item is a round trip.
/// </summary>
/// <remarks>
/// <para>The guard contract, as this end implements it:</para>
/// <list type="bullet">
/// <item><see cref="TryCommit"/> (scan): true only if a value chosen earlier is still held here; a
/// reservation would need a round trip, so it never starts one.</item>
/// <item><see cref="Enable"/> / <see cref="Disable"/>: subscribe the site to the readiness the peer
/// pushes. Enable signals at once if the newest state this end has heard says ready, so that a
/// ready end takes part in <c>PriSelect</c> and <c>FairSelect</c> order; every push that says ready
/// signals again (stale and duplicated pushes included: a signal is only a hint). A push that says
/// the peer is lost fails the selection. Every site call is made under the end's lock, which
/// <see cref="Disable"/> takes too, so none is made once Disable has returned.</item>
/// <item><see cref="TryReserveAsync"/>: request (may be cancelled), reservation at the peer, reply.
/// If the token fired meanwhile, the reservation is given back and the answer is "nothing reserved".</item>
/// <item><see cref="Confirm"/> keeps the reserved value for the next read and tells the peer, whose
/// writer then goes on; <see cref="Release"/> gives it back to the front of the peer's queue.</item>
/// </list>
/// <para>Like every end, it belongs to one process.</para>
/// <para>
/// It uses nothing but public API. Its overrides say <c>protected internal</c> only because this
/// test assembly sees the library's internals; a guard in any other assembly writes
/// <c>protected override</c>.
/// </para>
/// </remarks>
internal sealed class DelayedChannelEnd<T> : Guard, IChannelIn<T>
{
    private readonly RemotePeer<T> _peer;
    private readonly object _lock = new();
    private GuardSite? _site;
    private PeerState _known = new(-1, false, false);
    private TaskCompletionSource? _readyKnown;

    // Owner only: the outstanding reservation, and the value chosen for the next read.
    private RemotePeer<T>.Entry? _reserved;
    private bool _reservedPoison;
    private bool _holding;
    private bool _holdingPoison;
    private T? _held;

    internal DelayedChannelEnd(RemotePeer<T> peer)
    {
        _peer = peer;
    }

    /// <summary>
    /// Whether <see cref="Enable"/> signals at once when the newest state this end knows says ready
    /// (true), or asks the peer for its state and signals when that answer arrives (false).
    /// </summary>
    internal bool SignalKnownReadinessOnEnable { get; init; } = true;

    /// <summary>Completes once a push has told this end that its peer is ready (test hook: makes selection order deterministic).</summary>
    internal Task ReadyKnown
    {
        get
        {
            lock (_lock)
            {
                if (_known.Ready)
                {
                    return Task.CompletedTask;
                }

                _readyKnown ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                return _readyKnown.Task;
            }
        }
    }

    /// <inheritdoc />
    protected internal override GuardCapabilities Capabilities => GuardCapabilities.CommitsAsynchronously;

    public T Read() => ReadAsync().AsTask().GetAwaiter().GetResult();

    public ValueTask<T> ReadAsync(CancellationToken cancellationToken = default)
    {
        if (_holding)
        {
            _holding = false;
            T value = _held!;
            _held = default;
            return _holdingPoison
                ? ValueTask.FromException<T>(new PoisonException("The remote channel has been poisoned."))
                : new ValueTask<T>(value);
        }

        return ReadRemoteAsync(cancellationToken);
    }

    public void Poison() => _peer.Poison();

    /// <summary>A push from the peer (any thread): remember the newest state, and tell an enabled selection.</summary>
    internal void OnPeerState(PeerState state)
    {
        TaskCompletionSource? readyKnown;
        lock (_lock)
        {
            readyKnown = LearnLocked(state);
            if (_site is { } site)
            {
                if (state.Lost)
                {
                    site.Fail(new IOException("The peer of a remote channel end is lost."));
                }
                else if (state.Ready)
                {
                    site.Signal();
                }
            }
        }

        readyKnown?.TrySetResult();
    }

    protected internal override bool TryCommit(GuardSite site)
    {
        if (_holding)
        {
            return true;
        }

        // Ready as far as this end knows, but committing takes a round trip: say so, and the
        // engine reserves it in its turn (the contract's convention for asynchronous guards).
        lock (_lock)
        {
            if (_known.Ready || _known.Lost)
            {
                site.Signal();
            }
        }

        return false;
    }

    protected internal override void Enable(GuardSite site)
    {
        lock (_lock)
        {
            _site = site;
            if (_known.Lost)
            {
                site.Fail(new IOException("The peer of a remote channel end is lost."));
                return;
            }

            if (SignalKnownReadinessOnEnable)
            {
                if (_known.Ready)
                {
                    site.Signal();
                }

                return;
            }
        }

        // Without trusting what it knows, the end asks: the answer comes back as a push, late.
        // (Asking nothing would wait forever for readiness that arrived before the subscription.)
        _peer.RequestState(this);
    }

    protected internal override void Disable(GuardSite site)
    {
        lock (_lock)
        {
            _site = null;
        }
    }

    protected internal override async ValueTask<bool> TryReserveAsync(GuardSite site, CancellationToken cancellationToken)
    {
        Latency latency = _peer.Latency;
        await latency.TravelAsync(cancellationToken).ConfigureAwait(false);
        if (cancellationToken.IsCancellationRequested)
        {
            return NothingReserved(cancellationToken);
        }

        (GrantKind kind, RemotePeer<T>.Entry? entry, PeerState state) = _peer.TryReserve();
        await latency.TravelAsync(CancellationToken.None).ConfigureAwait(false);
        OnReply(state);
        if (kind == GrantKind.Refused)
        {
            return false;
        }

        if (cancellationToken.IsCancellationRequested)
        {
            // The answer crossed the cancellation: give the item back before saying "nothing reserved".
            if (entry is not null)
            {
                _peer.Release(entry);
            }

            return NothingReserved(cancellationToken);
        }

        _reserved = entry;
        _reservedPoison = kind == GrantKind.Poison;
        return true;
    }

    protected internal override void Confirm(GuardSite site)
    {
        if (_reserved is { } entry)
        {
            _reserved = null;
            _peer.Confirm(entry);
            Hold(entry.Value, poison: false);
        }
        else if (_reservedPoison)
        {
            _reservedPoison = false;
            Hold(default, poison: true);
        }

        // Otherwise TryCommit found a value held already: it stays for the next read.
    }

    protected internal override void Release(GuardSite site)
    {
        if (_reserved is { } entry)
        {
            _reserved = null;
            _peer.Release(entry);
        }

        _reservedPoison = false;
    }

    /// <summary>Either answer the contract allows for a cancelled reservation: false, or <see cref="OperationCanceledException"/>.</summary>
    private static bool NothingReserved(CancellationToken cancellationToken) =>
        Random.Shared.Next(2) == 0 ? false : throw new OperationCanceledException(cancellationToken);

    private void Hold(T? value, bool poison)
    {
        _held = value;
        _holdingPoison = poison;
        _holding = true;
    }

    /// <summary>A reply carries the peer's state: learn from it, without signalling (the engine is waiting for this very answer).</summary>
    private void OnReply(PeerState state)
    {
        TaskCompletionSource? readyKnown;
        lock (_lock)
        {
            readyKnown = LearnLocked(state);
        }

        readyKnown?.TrySetResult();
    }

    /// <summary>Keeps <paramref name="state"/> if it is newer than what this end knows; returns a waiter of <see cref="ReadyKnown"/> to complete.</summary>
    private TaskCompletionSource? LearnLocked(PeerState state)
    {
        if (state.Version <= _known.Version)
        {
            return null;
        }

        _known = state;
        TaskCompletionSource? readyKnown = state.Ready ? _readyKnown : null;
        if (readyKnown is not null)
        {
            _readyKnown = null;
        }

        return readyKnown;
    }

    private async ValueTask<T> ReadRemoteAsync(CancellationToken cancellationToken)
    {
        Latency latency = _peer.Latency;
        await latency.TravelAsync(cancellationToken).ConfigureAwait(false);
        T value = await _peer.TakeAsync(cancellationToken).ConfigureAwait(false);
        await latency.TravelAsync(CancellationToken.None).ConfigureAwait(false);
        return value;
    }
}
