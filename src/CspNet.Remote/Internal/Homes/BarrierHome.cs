using System;
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

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "_leaving is cancelled by Detach, never disposed: a Sync may be linking to it then, and it holds no timer.")]
    private sealed class PartyEnd(Barrier barrier) : HomeEnd
    {
        // Cancelled when the party detaches: its waiting Sync is withdrawn before it resigns, so that
        // the arrival of a party that left never opens the barrier for the others.
        private readonly CancellationTokenSource _leaving = new();

        internal override Task<OpResult> SyncAsync(SyncKind kind, CancellationToken cancellationToken) =>
            kind != SyncKind.BarrierSync
                ? base.SyncAsync(kind, cancellationToken)
                : Run(ct => LeavingWait.RunAsync(barrier.SyncAsync, _leaving, ct), cancellationToken);

        internal override void Poison() => barrier.Poison();

        // A party that leaves on purpose resigns: the others go on with one party fewer.
        internal override void Detach()
        {
            _leaving.Cancel();
            try
            {
                barrier.Resign();
            }
            catch (InvalidOperationException)
            {
                // More parties joined than the creator enrolled, and as many have left: nobody left to resign.
            }
        }

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

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "_leaving is cancelled by Detach, never disposed: a Fall may be linking to it then, and it holds no timer.")]
    private sealed class UserEnd(Bucket bucket) : HomeEnd
    {
        // Cancelled when the user detaches: its waiting Fall climbs out before the detach is
        // answered, so a Flush after that never counts it.
        private readonly CancellationTokenSource _leaving = new();

        internal override Task<OpResult> SyncAsync(SyncKind kind, CancellationToken cancellationToken) => kind switch
        {
            SyncKind.BucketFall => Run(ct => LeavingWait.RunAsync(bucket.FallAsync, _leaving, ct), cancellationToken),
            SyncKind.BucketFlush => Run(ct => new ValueTask<OpResult>(new OpResult(Outcome.Ok, Count: bucket.Flush())), cancellationToken),
            _ => base.SyncAsync(kind, cancellationToken),
        };

        internal override void Poison() => bucket.Poison();

        internal override void Detach() => _leaving.Cancel();
    }
}

/// <summary>A remote party's wait at a barrier or bucket, which its end detaching ends too.</summary>
internal static class LeavingWait
{
    /// <summary>OK when <paramref name="wait"/> completes; CANCELLED when <paramref name="leaving"/> (the end detaching) ended it.</summary>
    internal static async ValueTask<OpResult> RunAsync(Func<CancellationToken, ValueTask> wait, CancellationTokenSource leaving, CancellationToken cancellationToken)
    {
        using var either = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, leaving.Token);
        try
        {
            await wait(either.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (leaving.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            return OpResult.Cancelled;
        }

        return OpResult.Ok;
    }
}
