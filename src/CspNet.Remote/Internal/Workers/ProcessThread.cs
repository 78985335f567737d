using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Workers;

/// <summary>Runs one blocking process on a thread of its own, as a worker (pool side) or a local fallback (client side) does.</summary>
internal static class ProcessThread
{
    /// <summary>
    /// Starts <paramref name="run"/> on a new background thread whose named constructs resolve on
    /// <paramref name="node"/> (when given) and whose ambient <see cref="ProcessCancellation"/> is
    /// <paramref name="cancellation"/>; the task completes with the exception it threw, or null.
    /// </summary>
    /// <remarks>
    /// A thread per process, not a pool thread: <c>ICSPProcess.Run</c> blocks on channels for as
    /// long as it likes, and a pool thread blocked that way would starve the pool (the gRPC
    /// server's and client's continuations run there). The caller's execution context is not
    /// flowed: the thread must not inherit a gRPC call's state; only the node is set.
    /// </remarks>
    internal static Task<Exception?> Start(Action run, CspNode? node, ProcessCancellation cancellation, string threadName)
    {
        var done = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            Exception? failure = null;
            try
            {
                using ProcessCancellation.Scope cancelling = cancellation.Use();
                if (node is null)
                {
                    run();
                }
                else
                {
                    using CspManager.AmbientScope scope = CspManager.UseNode(node);
                    run();
                }
            }
#pragma warning disable CA1031 // A process's exception is its result: it is reported, not swallowed.
            catch (Exception e)
#pragma warning restore CA1031
            {
                failure = e;
            }

            done.SetResult(failure);
        })
        {
            IsBackground = true,
            Name = threadName,
        };
        thread.UnsafeStart();
        return done.Task;
    }
}
