using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

/// <summary>
/// A lightweight process: while it awaits a channel operation it holds no thread, so a program
/// can hold millions of them. It uses the same channels as <see cref="ICSPProcess"/> processes
/// (with <c>ReadAsync</c>/<c>WriteAsync</c>), and the two kinds communicate freely.
/// </summary>
/// <remarks>
/// An async process runs on .NET thread-pool threads, so it must not block one: CspNet's blocking
/// calls (<c>Read()</c>, <c>Write()</c>, <c>Select()</c>, <c>Sync()</c>, <c>Fall()</c>,
/// <c>Parallel.Run()</c>, ...) throw <see cref="System.InvalidOperationException"/> when called
/// inside it, naming the async form to await instead. A thread process (<see cref="ICSPProcess"/>)
/// that it starts through a <see cref="Parallel"/> may block as usual.
/// </remarks>
public interface IAsyncCSPProcess
{
    /// <summary>The process body. The process ends when the returned task completes.</summary>
    /// <param name="cancellationToken">The token passed to <see cref="Parallel.RunAsync"/>.</param>
    /// <returns>A task that completes when the process ends.</returns>
    Task RunAsync(CancellationToken cancellationToken);
}
