using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Processes;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Client;

/// <summary>A named barrier hosted by this program (or stand-alone): the core barrier itself.</summary>
internal sealed class LocalNamedBarrier(string name, Barrier barrier) : NamedBarrier(name)
{
    public override void Sync() => barrier.Sync();

    public override ValueTask SyncAsync(CancellationToken cancellationToken = default) => barrier.SyncAsync(cancellationToken);

    public override void Poison() => barrier.Poison();
}

/// <summary>A named barrier hosted by another program: each Sync is one arrival there.</summary>
internal sealed class RemoteNamedBarrier(string name, PeerLink link, uint handle) : NamedBarrier(name), IDetachableEnd
{
    private readonly EndDetachment _detachment = new(new EndRoute(new Route(link, handle), reattach: null, name), $"party of barrier '{name}'");

    /// <summary>Detaches the party: it resigns from the barrier at its home, which then waits for one party fewer.</summary>
    public Task DetachAsync(CancellationToken cancellationToken) => _detachment.DetachAsync(cancellationToken);

    public override void Sync()
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Sync()", "SyncAsync()");
#pragma warning disable RS0030 // The paper's synchronous Sync() over SyncAsync() (refused inside async processes).
        SyncAsync().AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }

    public override async ValueTask SyncAsync(CancellationToken cancellationToken = default) =>
        await RemoteSync.RunAsync(link, handle, _detachment, SyncKind.BarrierSync, $"Syncing on barrier '{Name}'", " while a Sync waited on it: its arrival was withdrawn", cancellationToken).ConfigureAwait(false);

    public override void Poison()
    {
        _detachment.ThrowIfDetached();
        link.Poison(handle);
    }
}

/// <summary>A named bucket hosted by this program (or stand-alone): the core bucket itself.</summary>
internal sealed class LocalNamedBucket(string name, Bucket bucket) : NamedBucket(name)
{
    public override void Fall() => bucket.Fall();

    public override ValueTask FallAsync(CancellationToken cancellationToken = default) => bucket.FallAsync(cancellationToken);

    public override int Flush() => bucket.Flush();

    public override ValueTask<int> FlushAsync(CancellationToken cancellationToken = default) => new(bucket.Flush());

    public override void Poison() => bucket.Poison();
}

/// <summary>A named bucket hosted by another program.</summary>
internal sealed class RemoteNamedBucket(string name, PeerLink link, uint handle) : NamedBucket(name), IDetachableEnd
{
    private readonly EndDetachment _detachment = new(new EndRoute(new Route(link, handle), reattach: null, name), $"user of bucket '{name}'");

    /// <summary>Detaches the user: a Fall it has waiting climbs out of the bucket, and the bucket keeps nothing of it.</summary>
    public Task DetachAsync(CancellationToken cancellationToken) => _detachment.DetachAsync(cancellationToken);

    public override void Fall()
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Fall()", "FallAsync()");
#pragma warning disable RS0030 // The paper's synchronous Fall() over FallAsync() (refused inside async processes).
        FallAsync().AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }

    public override async ValueTask FallAsync(CancellationToken cancellationToken = default) =>
        await RemoteSync.RunAsync(link, handle, _detachment, SyncKind.BucketFall, $"Falling into bucket '{Name}'", " while a Fall waited in the bucket: it climbed out", cancellationToken).ConfigureAwait(false);

    public override int Flush()
    {
        // A flush of a remote bucket waits for a round trip: refused inside async processes like Fall().
        ProcessContext.ThrowIfBlockingInAsyncProcess("Flush()", "FlushAsync()");
#pragma warning disable RS0030 // The paper's synchronous Flush() over FlushAsync() (refused inside async processes).
        return FlushAsync().AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }

    public override async ValueTask<int> FlushAsync(CancellationToken cancellationToken = default) =>
        await RemoteSync.RunAsync(link, handle, _detachment, SyncKind.BucketFlush, $"Flushing bucket '{Name}'", " while its Flush waited for the answer", cancellationToken).ConfigureAwait(false);

    public override void Poison()
    {
        _detachment.ThrowIfDetached();
        link.Poison(handle);
    }
}

internal static class RemoteSync
{
    /// <summary>One Sync frame and its answer; <paramref name="caught"/> says what became of an operation a detach ended.</summary>
    internal static async ValueTask<int> RunAsync(PeerLink link, uint handle, EndDetachment detachment, SyncKind kind, string what, string caught, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        detachment.ThrowIfDetached();
        PendingOp op = link.Begin();
        link.Send(new ClientFrame { Sync = new SyncOp { Handle = handle, OpId = op.Id, Kind = kind } });
        Completion completion = await link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
        if (detachment.CancelledByDetach(completion, cancellationToken))
        {
            throw detachment.Disposed(caught);
        }

        completion.ThrowIfFailed(what, cancellationToken);
        return completion.Count;
    }
}
