namespace CspNet.Benchmarks.Papers;

/// <summary>The shared start signal of a live-process run, and the count of parked processes.</summary>
/// <remarks>
/// Sharded: a task keeps its continuations in a list it locks to add one, and millions of
/// processes awaiting a single task from the pool threads contended for that lock (a sampled
/// trace of JVMCSP's program showed 8% of its thread time in Monitor.Enter's slow path). Each
/// await takes the next of <see cref="Shards"/> tasks instead; the memory is the same, 8 bytes
/// per waiting process in a continuation list.
/// </remarks>
internal sealed class LiveGate
{
    private const int Shards = 64;

    private readonly TaskCompletionSource[] _open = new TaskCompletionSource[Shards];
    private int _parked;
    private int _next;

    internal LiveGate()
    {
        for (int i = 0; i < Shards; i++)
        {
            _open[i] = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    /// <summary>Completes when <see cref="Open"/> is called. Awaiting it stores the awaiting state-machine box itself in the task's continuation list (8 bytes per waiter, no other allocation).</summary>
    internal Task Opened => _open[(Interlocked.Increment(ref _next) & int.MaxValue) % Shards].Task;

    internal int Parked => Volatile.Read(ref _parked);

    internal void ArrivedAndParking() => Interlocked.Increment(ref _parked);

    internal void Open()
    {
        foreach (TaskCompletionSource shard in _open)
        {
            shard.TrySetResult();
        }
    }
}
