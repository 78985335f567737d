using System;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Threading;

namespace CspNet.Internal.Processes;

/// <summary>
/// Tells blocking CspNet calls whether they run inside an async process, where blocking would
/// hold a .NET thread-pool thread (thousands of such processes starve the pool).
/// </summary>
/// <remarks>
/// <see cref="Parallel"/> marks the execution context of the async processes it starts, and
/// unmarks that of the thread processes it starts (which may be started from inside an async
/// process and would otherwise inherit the mark). The mark is set once per run, not per process:
/// see <see cref="RunContexts"/>. Code run by a plain <c>Task.Run</c> outside any process is not
/// marked and may block.
/// </remarks>
internal static class ProcessContext
{
    /// <summary>
    /// Throws <see cref="InvalidOperationException"/> if the calling code runs inside an async
    /// CspNet process. Cheap when it does not: a thread process runs on a
    /// <see cref="CSPThreadPool"/> thread, not a .NET thread-pool thread, so the execution
    /// context is read only on .NET thread-pool threads.
    /// </summary>
    /// <param name="blockingCall">The blocking call, as the user wrote it: <c>"Read()"</c>.</param>
    /// <param name="asyncTwin">
    /// The call to use instead: <c>"ReadAsync()"</c>. The message puts <c>await</c> before it
    /// unless it starts with <c>await</c> already (<c>"await foreach (var item in ReadAllAsync())"</c>).
    /// </param>
    /// <exception cref="InvalidOperationException">The calling code runs inside an async CspNet process.</exception>
    internal static void ThrowIfBlockingInAsyncProcess(string blockingCall, string asyncTwin)
    {
        if (Thread.CurrentThread.IsThreadPoolThread && RunContexts.InAsyncProcess)
        {
            ThrowBlockingInAsyncProcess(blockingCall, asyncTwin);
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowBlockingInAsyncProcess(string blockingCall, string asyncTwin)
    {
        string instead = asyncTwin.StartsWith("await ", StringComparison.Ordinal) ? asyncTwin : "await " + asyncTwin;
        throw new InvalidOperationException(
            $"{blockingCall} would block a thread-pool thread: this code runs inside an async CspNet process (IAsyncCSPProcess). " +
            $"Use '{instead}' instead, or make the process a thread process (ICSPProcess), which may block.");
    }
}
