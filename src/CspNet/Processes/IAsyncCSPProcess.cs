using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

/// <summary>
/// A lightweight process: while it awaits a channel operation it holds no thread, so a program
/// can hold millions of them. It uses the same channels as <see cref="ICSPProcess"/> processes
/// (with <c>ReadAsync</c>/<c>WriteAsync</c>), and the two kinds communicate freely.
/// </summary>
public interface IAsyncCSPProcess
{
    /// <summary>The process body. The process ends when the returned task completes.</summary>
    /// <param name="cancellationToken">The token passed to <see cref="Parallel.RunAsync"/>.</param>
    /// <returns>A task that completes when the process ends.</returns>
    Task RunAsync(CancellationToken cancellationToken);
}
