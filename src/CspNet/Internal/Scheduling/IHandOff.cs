using System.Threading;

namespace CspNet.Internal.Scheduling;

/// <summary>
/// Something that owns a parked async operation's continuation (an <see cref="AsyncWaiter{T}"/>,
/// an async selection): what <see cref="HandOff"/> queues, in a next-run slot or on the .NET
/// thread pool. One reference names the continuation, so a slot can be taken with one exchange.
/// </summary>
/// <remarks>
/// Implementations keep their continuation in a <see cref="ContinuationCore{TResult}"/> and
/// implement <see cref="IThreadPoolWorkItem.Execute"/> as <c>HandOff.Run(this)</c>. An owner is
/// queued at most once per completion: it is completed again only after its continuation has
/// run (the continuation reads the result, which is what makes the owner reusable).
/// </remarks>
internal interface IHandOff : IThreadPoolWorkItem
{
    /// <summary>Runs the continuation registered for the current completion; called once per completion.</summary>
    void InvokeContinuation();
}
