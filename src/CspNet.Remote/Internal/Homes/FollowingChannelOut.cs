using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using CspNet.Internal;
using CspNet.Internal.Processes;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// A writing end of a channel whose home is this program and may move away while this program
/// goes on: see <see cref="FollowingChannelIn{T}"/>. A write waiting at the core when the move
/// begins is cancelled there exactly (no reader took the value, or one did and the write is done)
/// and runs again at the new home; a selection offering on the end scans again and offers there.
/// </summary>
internal sealed class FollowingChannelOut<T> : AltingChannelOut<T>, IFollowingEnd
{
    private readonly ChannelWriteEnd<T> _core;
    private readonly FollowingState<AltingChannelOut<T>> _following;
    private readonly TimeSpan _bound;
    private T? _value;
    private bool _hasOffer;
    private AltingChannelOut<T>? _scan;      // owner only: where the current scan of a selection goes (null: nowhere yet)
    private AltingChannelOut<T>? _enabledOn; // owner only: what Enable enabled
    private readonly Func<AltingChannelOut<T>?> _place;
    private AltingChannelOut<T>? _offeredTo; // owner only: the end this selection's offer was handed to

    internal FollowingChannelOut(ChannelWriteEnd<T> core, Func<CancellationToken, Task<AltingChannelOut<T>>> attach, string name, TimeSpan bound)
    {
        _core = core;
        _following = new FollowingState<AltingChannelOut<T>>(attach, name);
        _bound = bound;
        _place = Place;
    }

    public override T? OfferedValue => _value;

    public override bool HasOffer => _hasOffer;

    public override AltingChannelOut<T> Offer(T value)
    {
        _value = value;
        _hasOffer = true;
        return this;
    }

    public override void Write(T value)
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Write(value)", "WriteAsync(value)");
        ValueTask writing = WriteAsync(value);
#pragma warning disable RS0030 // The synchronous Write over WriteAsync (refused inside async processes above), so that a move can stop it exactly.
        if (!writing.IsCompletedSuccessfully)
        {
            writing.AsTask().GetAwaiter().GetResult();
        }
#pragma warning restore RS0030
    }

    public override ValueTask WriteAsync(T value, CancellationToken cancellationToken = default)
    {
        if (!cancellationToken.CanBeCanceled && _following.TryStartLocal((_core, value), s_start, out ValueTask write, out FollowingState<AltingChannelOut<T>>.Epoch epoch))
        {
            return write.IsCompletedSuccessfully ? write : AwaitLocalAsync(write, epoch, value);
        }

        return Following(default, null, value, cancellationToken);
    }

    /// <summary>A local write that waits (the common case of an exchange): pooled, and it leaves the general path only if a move stops it.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask AwaitLocalAsync(ValueTask write, FollowingState<AltingChannelOut<T>>.Epoch epoch, T value)
    {
        try
        {
            await write.ConfigureAwait(false);
            return;
        }
        catch (OperationCanceledException) when (epoch.Stop.IsCancellationRequested)
        {
            // Stopped at the core by the move (this write has no token of its own): no reader took the value.
        }

        await Following(ValueTask.FromCanceled<bool>(epoch.Stop.Token), epoch, value, CancellationToken.None).ConfigureAwait(false);
    }

    private async ValueTask Following(ValueTask<bool> started, FollowingState<AltingChannelOut<T>>.Epoch? epoch, T value, CancellationToken cancellationToken) =>
        await _following.RunAsync(started, epoch, (this, value), s_local, s_remote, cancellationToken).ConfigureAwait(false);

    private static async ValueTask<bool> AsBool(ValueTask write)
    {
        await write.ConfigureAwait(false);
        return true;
    }

    private static readonly Func<(ChannelWriteEnd<T> Core, T Value), FollowingState<AltingChannelOut<T>>.Epoch, ValueTask> s_start =
        static (s, epoch) => s.Core.WriteAsync(s.Value, epoch.Stop.Token);

    private static readonly Func<(FollowingChannelOut<T> End, T Value), CancellationToken, ValueTask<bool>> s_local =
        static (s, token) => AsBool(s.End._core.WriteAsync(s.Value, token));

    private static readonly Func<AltingChannelOut<T>, (FollowingChannelOut<T> End, T Value), CancellationToken, ValueTask<bool>> s_remote =
        static (remote, s, token) => AsBool(remote.WriteAsync(s.Value, token));

    public override void Poison() => _following.Poison(_core.Poison, static remote => remote.Poison());

    void IFollowingEnd.BeginMove() => _following.BeginMove();

    void IFollowingEnd.Stay() => _following.Stay();

    Task IFollowingEnd.FollowAsync() => _following.FollowAsync(_bound);

    // ---- the guard contract: each scan offers where the channel is (see Guard.CapabilitiesChange) ----

    internal override bool CapabilitiesChange => true;

    protected internal override GuardCapabilities Capabilities
    {
        get
        {
            _scan = Place();
            return _scan is null || ReferenceEquals(_scan, _core) ? GuardCapabilities.None : GuardCapabilities.CommitsAsynchronously;
        }
    }

    private AltingChannelOut<T>? Place() => _following.State switch
    {
        FollowingState<AltingChannelOut<T>>.Local => _core,
        FollowingState<AltingChannelOut<T>>.Remote => _following.RemoteEnd,
        _ => null,
    };

    protected internal override bool Prepare(GuardSite site)
    {
        if (!_hasOffer)
        {
            throw new InvalidOperationException("Nothing is offered on this writing end: call Offer(value) before the selection (each chosen offer is written once).");
        }

        if (_following.Failure is { } failure)
        {
            throw failure;
        }

        _offeredTo = null;
        return true;
    }

    /// <summary>Hands this selection's offer to where the scan goes, once per place.</summary>
    private AltingChannelOut<T>? Offered(GuardSite site)
    {
        if (_scan is { } scan && !ReferenceEquals(_offeredTo, scan))
        {
            scan.Offer(_value!);
            scan.Prepare(site);
            _offeredTo = scan;
        }

        return _scan;
    }

    protected internal override bool TryCommit(GuardSite site)
    {
        if (!ReferenceEquals(_scan, _core))
        {
            return Offered(site)?.TryCommit(site) ?? false;
        }

        // Committed at the core only while the channel is here (see FollowingState.TryStartLocal);
        // once a move has begun the selection has been told to scan again.
        return _following.TryStartLocal((End: this, Site: site), static (s, _) => s.End.Offered(s.Site)?.TryCommit(s.Site) ?? false, out bool committed, out _) && committed;
    }

    protected internal override void Enable(GuardSite site)
    {
        AltingChannelOut<T>? on = Offered(site);
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

    protected internal override void Confirm(GuardSite site)
    {
        _scan?.Confirm(site); // throws what went wrong with the chosen offer: it stays then, as for any guard

        // Written: an offer is used exactly once.
        _value = default;
        _hasOffer = false;
        _offeredTo = null;
    }

    protected internal override void Release(GuardSite site) => _scan?.Release(site);

    public override string ToString() => _following.RemoteEnd?.ToString() ?? _core.ToString() ?? base.ToString()!;
}
