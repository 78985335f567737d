using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// Whether a remote channel end has been detached (<see cref="CspNode.DetachAsync{T}(IChannelOut{T}, CancellationToken)"/>),
/// and the exception its later use throws.
/// </summary>
/// <remarks>
/// Detaching closes the end at its home (link.proto, Detach): what the end held there (unused write
/// credits, a slot or reader set aside for an offer, a value held for a selection) goes back to the
/// channel, and its place is free for another end. Operations still pending on the end are
/// cancelled there, exactly as a cancellation would (nothing moved), and throw
/// <see cref="ObjectDisposedException"/>.
/// </remarks>
internal sealed class EndDetachment(EndRoute route, string end)
{
    private int _detached;

    internal bool IsDetached => Volatile.Read(ref _detached) != 0;

    internal void ThrowIfDetached()
    {
        if (IsDetached)
        {
            throw Disposed();
        }
    }

    /// <summary>The exception for a use of the end after it was detached; <paramref name="what"/> says what happened to an operation caught by the detach.</summary>
    internal ObjectDisposedException Disposed(string? what = null) =>
        new(end, $"The {end} was detached (CspNode.DetachAsync){what}. Get the end again from the CspNode getter to use the channel from this program.");

    /// <summary>
    /// Whether the detach ended the operation: the home cancelled it (not its own token), or it was
    /// sent after the Detach and the home no longer knew the end (NOT_FOUND).
    /// </summary>
    internal bool CancelledByDetach(Completion completion, CancellationToken cancellationToken) =>
        IsDetached && completion.Lost is null && completion.Outcome switch
        {
            Protocol.Outcome.Cancelled or Protocol.Outcome.Moved => !cancellationToken.IsCancellationRequested,
            Protocol.Outcome.Error => completion.Status == Grpc.Core.StatusCode.NotFound,
            _ => false,
        };

    /// <summary>Detaches the end once (later calls return at once) and waits until its place at the home is free.</summary>
    internal Task DetachAsync(CancellationToken cancellationToken) =>
        Interlocked.Exchange(ref _detached, 1) == 0 ? DetachAt(route.Current, cancellationToken) : Task.CompletedTask;

    private static Task DetachAt(Route at, CancellationToken cancellationToken) => at.Link.DetachAsync(at.Handle, cancellationToken);
}
