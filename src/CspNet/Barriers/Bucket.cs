using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;

namespace CspNet;

/// <summary>
/// A CSP bucket: processes that <see cref="Fall"/> into it are held until another process calls
/// <see cref="Flush"/>, which releases all of them at once.
/// </summary>
/// <remarks>
/// <para>
/// Cancellation: a cancelled <see cref="FallAsync"/> leaves the bucket and is not counted by a
/// later flush. A fall that a flush released is never reported as cancelled. Poison:
/// <see cref="Poison"/> fails every held and every later fall with <see cref="PoisonException"/>;
/// flushing a poisoned bucket releases nobody and returns 0.
/// </para>
/// <para>Thread-safety: all members are safe to call from any thread.</para>
/// </remarks>
[DebuggerDisplay("{DebuggerDisplay,nq}")]
public sealed class Bucket : IPoisonable
{
    private readonly BucketCore _core = new();

    /// <summary>The number of processes held in the bucket now.</summary>
    public int Holding => _core.Holding;

    /// <summary>Blocks until another process flushes the bucket.</summary>
    /// <exception cref="PoisonException">The bucket is poisoned.</exception>
    public void Fall() => _core.Arrive();

    /// <summary>Completes, holding no thread while it waits, when another process flushes the bucket.</summary>
    /// <param name="cancellationToken">Takes this process out of the bucket if cancelled before a flush.</param>
    /// <returns>A task that completes when the bucket is flushed.</returns>
    /// <exception cref="PoisonException">The bucket is poisoned.</exception>
    /// <exception cref="OperationCanceledException">Cancelled before a flush released it.</exception>
    public ValueTask FallAsync(CancellationToken cancellationToken = default) => _core.ArriveAsync(cancellationToken);

    /// <summary>Releases every process held in the bucket.</summary>
    /// <returns>How many processes were released.</returns>
    public int Flush() => _core.Flush();

    /// <inheritdoc />
    public void Poison() => _core.Poison();

    /// <summary>Holding and poisoned, without taking the lock (a debugger may have frozen its holder).</summary>
    private string DebuggerDisplay => _core.DebuggerDisplay;
}
