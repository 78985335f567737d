using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using CspNet.Internal;
using CspNet.Internal.Processes;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// A reading end of a channel whose home is this program and may move away while this program
/// goes on (docs/DISTRIBUTED.md, "A moving home"): the core channel's own end while the home is
/// here, and the end attached at the new home once it moved. A read waiting at the core when the
/// move begins is cancelled there exactly (it took nothing, or it completed) and runs again at the
/// new home; a selection waiting on the end scans again and waits there.
/// </summary>
internal sealed class FollowingChannelIn<T> : AltingChannelIn<T>, IFollowingEnd
{
    private readonly ChannelReadEnd<T> _core;
    private readonly FollowingState<AltingChannelIn<T>> _following;
    private readonly TimeSpan _bound;
    private AltingChannelIn<T>? _scan;      // owner only: where the current scan of a selection goes (null: nowhere yet, the home is moving)
    private AltingChannelIn<T>? _enabledOn; // owner only: what Enable enabled
    private readonly Func<AltingChannelIn<T>?> _place;

    internal FollowingChannelIn(ChannelReadEnd<T> core, Func<CancellationToken, Task<AltingChannelIn<T>>> attach, string name, TimeSpan bound)
    {
        _core = core;
        _following = new FollowingState<AltingChannelIn<T>>(attach, name);
        _bound = bound;
        _place = Place;
    }

    public override T Read()
    {
        if (_core.IsHolding)
        {
            return _core.Read(); // the value a selection took here: never waits
        }

        ProcessContext.ThrowIfBlockingInAsyncProcess("Read()", "ReadAsync()");
        ValueTask<T> read = ReadAsync();
#pragma warning disable RS0030 // The synchronous Read() over ReadAsync() (refused inside async processes above), so that a move can stop it exactly.
        return read.IsCompletedSuccessfully ? read.Result : read.AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }

    public override ValueTask<T> ReadAsync(CancellationToken cancellationToken = default)
    {
        if (_core.IsHolding)
        {
            return _core.ReadAsync(cancellationToken);
        }

        if (!cancellationToken.CanBeCanceled && _following.State == FollowingState<AltingChannelIn<T>>.Local)
        {
            FollowingState<AltingChannelIn<T>>.Epoch epoch = _following.Current;
            ValueTask<T> read = _core.ReadAsync(epoch.Stop.Token);
            return read.IsCompletedSuccessfully ? read : AwaitLocalAsync(read, epoch);
        }

        return _following.RunAsync(default, null, this, s_local, s_remote, cancellationToken);
    }

    /// <summary>A local read that waits (the common case of an exchange): pooled, and it leaves the general path only if a move stops it.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<T> AwaitLocalAsync(ValueTask<T> read, FollowingState<AltingChannelIn<T>>.Epoch epoch)
    {
        try
        {
            return await read.ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (epoch.Stop.IsCancellationRequested)
        {
            // Stopped at the core by the move (this read has no token of its own): it took nothing.
        }

        return await _following.RunAsync(ValueTask.FromCanceled<T>(epoch.Stop.Token), epoch, this, s_local, s_remote, CancellationToken.None).ConfigureAwait(false);
    }

    private static readonly Func<FollowingChannelIn<T>, CancellationToken, ValueTask<T>> s_local = static (end, token) => end._core.ReadAsync(token);
    private static readonly Func<AltingChannelIn<T>, FollowingChannelIn<T>, CancellationToken, ValueTask<T>> s_remote = static (remote, _, token) => remote.ReadAsync(token);

    public override void Poison() => _following.Poison(_core.Poison, static remote => remote.Poison());

    void IFollowingEnd.BeginMove() => _following.BeginMove();

    void IFollowingEnd.Stay() => _following.Stay();

    Task IFollowingEnd.FollowAsync() => _following.FollowAsync(_bound);

    // ---- the guard contract: each scan goes where the channel is (see Guard.CapabilitiesChange) ----

    internal override bool CapabilitiesChange => true;

    protected internal override GuardCapabilities Capabilities
    {
        get
        {
            _scan = Place();
            return _scan is null || ReferenceEquals(_scan, _core) ? GuardCapabilities.None : GuardCapabilities.CommitsAsynchronously;
        }
    }

    /// <summary>Where a selection goes now: the value held here, the core, nowhere (moving, or failed), or the new home.</summary>
    private AltingChannelIn<T>? Place() => _core.IsHolding
        ? _core
        : _following.State switch
        {
            FollowingState<AltingChannelIn<T>>.Local => _core,
            FollowingState<AltingChannelIn<T>>.Remote => _following.RemoteEnd,
            _ => null,
        };

    protected internal override bool Prepare(GuardSite site)
    {
        if (!_core.IsHolding && _following.Failure is { } failure)
        {
            throw failure;
        }

        return true;
    }

    protected internal override bool TryCommit(GuardSite site) => _scan?.TryCommit(site) ?? false;

    protected internal override void Enable(GuardSite site)
    {
        AltingChannelIn<T>? on = _scan;
        _enabledOn = on;
        _following.Enable(site, on, _place, static (end, s) => end.Enable(s));
    }

    protected internal override void Disable(GuardSite site)
    {
        _following.Disabled();
        _enabledOn?.Disable(site);
        _enabledOn = null;
    }

    protected internal override ValueTask<bool> TryReserveAsync(GuardSite site, CancellationToken cancellationToken) =>
        _scan?.TryReserveAsync(site, cancellationToken) ?? new(false);

    protected internal override void Confirm(GuardSite site) => _scan?.Confirm(site);

    protected internal override void Release(GuardSite site) => _scan?.Release(site);

    public override string ToString() => _following.RemoteEnd?.ToString() ?? _core.ToString() ?? base.ToString()!;
}
