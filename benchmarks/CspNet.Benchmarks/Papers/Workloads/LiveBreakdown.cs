namespace CspNet.Benchmarks.Papers;

/// <summary>
/// Sizes of the pieces a live pair is made of, measured one kind of object at a time:
/// allocated bytes on the current thread (exact) for objects built synchronously, live bytes
/// (GC.GetTotalMemory(true) deltas) for what <see cref="Parallel"/> builds on pool threads.
/// </summary>
internal sealed record LiveBreakdown(
    double ChannelBytes,
    double WaiterBytes,
    double WriterObjectBytes,
    double ReplierObjectBytes,
    double WriterBoxBytes,
    double ReplierBoxBytes,
    double ParallelEntryBytes,
    double ParallelRunBytesPerProcess)
{
    /// <summary>Everything but the waiters, per pair.</summary>
    internal double PairBytesWithoutWaiters =>
        (2 * ChannelBytes) + WriterObjectBytes + ReplierObjectBytes + WriterBoxBytes + ReplierBoxBytes + (2 * ParallelEntryBytes) + (2 * ParallelRunBytesPerProcess);

    /// <param name="count">Objects of each kind to average over.</param>
    internal static LiveBreakdown Measure(int count = 20_000)
    {
        var keep = new object[count];
        var gates = new LiveGate[count];
        for (int i = 0; i < count; i++)
        {
            gates[i] = new LiveGate();
        }

        // A fresh One2OneChannel<int>: everything its constructor allocates (channel, core, lock...).
        long start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            keep[i] = new One2OneChannel<int>();
        }

        double channel = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;

        // An AsyncWaiter<int>: a WriteAsync with no reader parks one.
        var pending = new ValueTask[count];
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
#pragma warning disable CA2012 // Kept, never awaited: the writes stay parked; only their allocation is measured.
            pending[i] = ((One2OneChannel<int>)keep[i]).WriteAsync(i);
#pragma warning restore CA2012
        }

        double waiter = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;
        GC.KeepAlive(pending);

        var c1 = new One2OneChannel<int>[count];
        var c2 = new One2OneChannel<int>[count];
        for (int i = 0; i < count; i++)
        {
            c1[i] = new One2OneChannel<int>();
            c2[i] = new One2OneChannel<int>();
        }

        var writers = new PairWriter[count];
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            writers[i] = new PairWriter(c1[i], c2[i], 2, 0, gates[i]);
        }

        double writerObject = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;

        var repliers = new PairReplier[count];
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            repliers[i] = new PairReplier(c1[i], c2[i], 2, 0, gates[i]);
        }

        double replierObject = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;

        // The writer's state-machine box: its first write parks (no reader yet), allocating box + waiter.
        var tasks = new Task[count];
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            tasks[i] = writers[i].RunAsync(CancellationToken.None);
        }

        double writerBox = ((double)(GC.GetAllocatedBytesForCurrentThread() - start) / count) - waiter;

        // The replier's box: with gateAt 0 it first awaits its own gate (first continuation of a task: no list).
        start = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < count; i++)
        {
            tasks[i] = repliers[i].RunAsync(CancellationToken.None);
        }

        double replierBox = (double)(GC.GetAllocatedBytesForCurrentThread() - start) / count;
        GC.KeepAlive(keep);

        // Parallel's own cost per process: its array slots while idle, and what a run adds, with
        // processes that allocate nothing.
        var shared = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var idle = new IdleProcess(shared.Task);
        long before = GC.GetTotalMemory(forceFullCollection: true);
        var parallel = new Parallel();
        for (int i = 0; i < count; i++)
        {
            parallel.AddProcess(idle);
        }

        long created = GC.GetTotalMemory(forceFullCollection: true);
        Task run = parallel.RunAsync();
        while (idle.Started < count || ThreadPool.PendingWorkItemCount > 0)
        {
            Thread.Sleep(1);
        }

        Thread.Sleep(20);
        long running = GC.GetTotalMemory(forceFullCollection: true);
        double entry = (double)(created - before) / count;
        double perRun = (double)(running - created) / count;
        shared.SetResult();
        run.GetAwaiter().GetResult();

        GC.KeepAlive(writers);
        GC.KeepAlive(repliers);
        GC.KeepAlive(tasks);
        return new LiveBreakdown(channel, waiter, writerObject, replierObject, writerBox, replierBox, entry, perRun);
    }

    /// <summary>An async process that allocates nothing: it returns a shared task.</summary>
    private sealed class IdleProcess(Task wait) : IAsyncCSPProcess
    {
        private int _started;

        internal int Started => Volatile.Read(ref _started);

        public Task RunAsync(CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref _started);
            return wait;
        }
    }
}
