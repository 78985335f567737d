using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// A named barrier hosted here: a core <see cref="CspNet.Barrier"/> whose enrolled count covers the
/// parties of every program. A remote party's Sync runs as an async Sync here.
/// </summary>
internal sealed class BarrierHome(string name, int enrolled) : Home(name, NameKind.Barrier, string.Empty, 0)
{
    internal Barrier Barrier { get; } = new(enrolled);

    protected override HomeEnd AttachRole(Role role, string peer) =>
        role == Role.Barrier ? new PartyEnd(Barrier) : throw RoleRefused(role, "a barrier has only parties.");

    private sealed class PartyEnd(Barrier barrier) : HomeEnd
    {
        internal override Task<OpResult> SyncAsync(SyncKind kind, CancellationToken cancellationToken) =>
            kind != SyncKind.BarrierSync
                ? base.SyncAsync(kind, cancellationToken)
                : Run(
                    async ct =>
                    {
                        await barrier.SyncAsync(ct).ConfigureAwait(false);
                        return OpResult.Ok;
                    },
                    cancellationToken);

        internal override void Poison() => barrier.Poison();

        // An enrolled party that vanished can never sync again: the others would wait forever.
        internal override void Lost(string peer) => barrier.Poison();
    }
}

/// <summary>A named bucket hosted here: a core <see cref="CspNet.Bucket"/>; remote Fall and Flush run on it.</summary>
internal sealed class BucketHome(string name) : Home(name, NameKind.Bucket, string.Empty, 0)
{
    internal Bucket Bucket { get; } = new();

    protected override HomeEnd AttachRole(Role role, string peer) =>
        role == Role.Bucket ? new UserEnd(Bucket) : throw RoleRefused(role, "a bucket has only users.");

    private sealed class UserEnd(Bucket bucket) : HomeEnd
    {
        internal override Task<OpResult> SyncAsync(SyncKind kind, CancellationToken cancellationToken) => kind switch
        {
            SyncKind.BucketFall => Run(
                async ct =>
                {
                    await bucket.FallAsync(ct).ConfigureAwait(false);
                    return OpResult.Ok;
                },
                cancellationToken),
            SyncKind.BucketFlush => Run(ct => new ValueTask<OpResult>(new OpResult(Outcome.Ok, Count: bucket.Flush())), cancellationToken),
            _ => base.SyncAsync(kind, cancellationToken),
        };

        internal override void Poison() => bucket.Poison();
    }
}
