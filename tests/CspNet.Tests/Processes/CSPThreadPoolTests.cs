using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using CspNet.Internal.Processes;
using static CspNet.Tests.Processes.ProcessTestHelpers;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Processes;

/// <summary>
/// <see cref="CSPThreadPool"/>: stack size, reuse, release and priority. Every test uses its own
/// pool (never <see cref="CSPThreadPool.Default"/>) so that the counts it observes are its own.
/// </summary>
public class CSPThreadPoolTests
{
    private const int KiB = 1024;
    private const int MiB = 1024 * 1024;
    private const int FrameBytes = 4096;

    // ---- Stack size ----

    [Fact]
    public void MaxStackSize_NewPool_IsZeroMeaningRuntimeDefault()
    {
        Assert.Equal(0, new CSPThreadPool().MaxStackSize);
        Assert.Equal(512 * KiB, new CSPThreadPool(512 * KiB).MaxStackSize);
    }

    [Fact]
    public void MaxStackSize_Negative_ThrowsArgumentOutOfRangeException()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new CSPThreadPool(-1));
        var pool = new CSPThreadPool();
        Assert.Throws<ArgumentOutOfRangeException>(() => pool.MaxStackSize = -1);
        Assert.Equal(0, pool.MaxStackSize);
    }

    [Fact(Timeout = 30000)]
    public async Task MaxStackSize_512KiB_UsableStackBoundedByRequest()
    {
        // Below 512 KiB where the OS reserves exactly what was asked (Windows); within glibc's
        // stack-cache bound elsewhere (see MostStackGranted). Either way far below the default.
        var pool = new CSPThreadPool(512 * KiB);

        long usable = await MeasureUsableStackAsync(pool);

        Assert.InRange(usable, FrameBytes, MostStackGranted(512 * KiB) - 1);
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task MaxStackSize_16MiB_UsableStackAbove12MiB()
    {
        // The brief's bound was "> 2 MiB", which distinguishes 16 MiB from Windows' 1 MiB default
        // but not from Linux's 8 MiB default thread stack; 12 MiB distinguishes both.
        var pool = new CSPThreadPool(16 * MiB);

        long usable = await MeasureUsableStackAsync(pool);

        Assert.InRange(usable, 12L * MiB, MostStackGranted(16 * MiB));
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task MaxStackSize_Changed_IdleThreadsExitAndNewThreadsGetNewSize()
    {
        var pool = new CSPThreadPool(16 * MiB);
        Thread[] oldThreads = await RunConcurrentlyAsync(pool, 2);
        Assert.Equal(2, pool.IdleCount);

        pool.MaxStackSize = 512 * KiB;

        Assert.Equal(0, pool.IdleCount);
        AssertAllExit(oldThreads);
        Assert.Equal(0, pool.ThreadCount);

        long usable = await MeasureUsableStackAsync(pool);
        Assert.InRange(usable, FrameBytes, MostStackGranted(512 * KiB) - 1);
        Assert.Equal(1, pool.ThreadCount);
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task MaxStackSize_SetToSameValue_KeepsIdleThreads()
    {
        var pool = new CSPThreadPool(1 * MiB);
        Thread[] threads = await RunConcurrentlyAsync(pool, 2);

        pool.MaxStackSize = 1 * MiB;

        Assert.Equal(2, pool.IdleCount);
        Assert.Equal(2, pool.ThreadCount);
        Assert.All(threads, thread => Assert.True(thread.IsAlive));
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task MaxStackSize_ChangedWhileProcessRuns_ThreadExitsAfterItsProcess()
    {
        var pool = new CSPThreadPool(1 * MiB);

        Thread processThread = await RunOneProcessAsync(pool, whileItRuns: () => pool.MaxStackSize = 2 * MiB);

        // The thread has the old size: it is not kept for reuse.
        Assert.Equal(0, pool.IdleCount);
        AssertAllExit([processThread]);
        Assert.Equal(0, pool.ThreadCount);
    }

    // ---- Reuse ----

    [Fact(Timeout = 30000)]
    public async Task Start_TwoSequentialRunsOfThree_ReusesTheSameThreads()
    {
        var pool = new CSPThreadPool();

        Thread[] first = await RunConcurrentlyAsync(pool, 3);
        Assert.Equal(3, pool.ThreadCount);
        Assert.Equal(3, pool.IdleCount);
        Assert.Equal(0, pool.BusyCount);

        Thread[] second = await RunConcurrentlyAsync(pool, 3);
        Assert.Equal(3, pool.ThreadCount);
        Assert.Equal(3, pool.IdleCount);

        Assert.Equal(first.Select(t => t.ManagedThreadId).Order(), second.Select(t => t.ManagedThreadId).Order());
        Assert.Equal(first.Select(t => t.Name).Order(), second.Select(t => t.Name).Order());
        Assert.Equal(3, first.Select(t => t.Name).Distinct().Count());
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task Start_ProcessThread_IsNamedBackgroundThread()
    {
        var pool = new CSPThreadPool();

        Thread thread = (await RunConcurrentlyAsync(pool, 1))[0];

        Assert.True(thread.IsBackground);
        Assert.StartsWith("CSP process thread", thread.Name, StringComparison.Ordinal);
        Assert.False(thread.IsThreadPoolThread);
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task Start_ProcessThrows_ThreadSurvivesAndIsReused()
    {
        var pool = new CSPThreadPool();
        Thread? failedOn = null;
        var failing = new Parallel { ThreadPool = pool };
        failing.AddProcess(() =>
        {
            failedOn = Thread.CurrentThread;
            throw new InvalidOperationException("process failure");
        });

        await Assert.ThrowsAsync<InvalidOperationException>(() => failing.RunAsync());

        Assert.Equal(1, pool.ThreadCount);
        Assert.Equal(1, pool.IdleCount);
        Assert.Same(failedOn, (await RunConcurrentlyAsync(pool, 1))[0]);
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task ThreadCount_ManySequentialRunsOfOneProcess_StaysOne()
    {
        var pool = new CSPThreadPool();
        var threadIds = new ConcurrentBag<int>();

        for (int run = 0; run < 20; run++)
        {
            var parallel = new Parallel { ThreadPool = pool };
            parallel.AddProcess(() => threadIds.Add(Environment.CurrentManagedThreadId));
            await parallel.RunAsync();
        }

        Assert.Equal(1, pool.ThreadCount);
        Assert.Single(threadIds.Distinct());
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task ThreadCount_RunsOfVaryingWidth_NeverExceedsMostProcessesRunningAtOnce()
    {
        var pool = new CSPThreadPool();
        int peak = 0;

        foreach (int width in new[] { 2, 5, 3, 1, 4 })
        {
            peak = Math.Max(peak, width);
            int expectedPeak = peak;
            var observed = new ConcurrentBag<int>();

            await RunConcurrentlyAsync(pool, width, () => observed.Add(pool.ThreadCount));

            // While the run was at its widest, the pool had no more threads than the widest run so far.
            Assert.All(observed, count => Assert.InRange(count, width, expectedPeak));
            Assert.Equal(expectedPeak, pool.ThreadCount);
        }

        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task ThreadCount_AsyncProcessesAndNestedParallel_OnlyThreadProcessesTakeThreads()
    {
        var pool = new CSPThreadPool();
        using var allThreadProcessesStarted = new CountdownEvent(3);
        void ThreadProcess()
        {
            allThreadProcessesStarted.Signal();
            Assert.True(allThreadProcessesStarted.Wait(WaitLimit));
        }

        var inner = new Parallel { ThreadPool = pool };
        inner.AddProcess(ThreadProcess);
        inner.AddProcess(ThreadProcess);
        inner.AddProcess(async _ => await Task.Yield());
        var outer = new Parallel { ThreadPool = pool };
        outer.AddProcess(ThreadProcess);
        outer.AddProcess(inner);
        outer.AddProcess(async _ => await Task.Yield());

        await outer.RunAsync();

        // Three thread processes ran at once; the nested Parallel and the async processes took no pool thread.
        Assert.Equal(3, pool.ThreadCount);
        pool.Release();
    }

    // ---- Release ----

    [Fact(Timeout = 30000)]
    public async Task Release_IdleThreads_ThreadsExitAndCountDropsToZero()
    {
        var pool = new CSPThreadPool();
        Thread[] threads = await RunConcurrentlyAsync(pool, 3);

        pool.Release();

        Assert.Equal(0, pool.IdleCount);
        AssertAllExit(threads);
        Assert.Equal(0, pool.ThreadCount);

        // Threads are created again on demand.
        Thread[] again = await RunConcurrentlyAsync(pool, 2);
        Assert.Equal(2, pool.ThreadCount);
        Assert.DoesNotContain(again, threads.Contains);
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task Release_WhileProcessRuns_BusyThreadIsKeptForReuse()
    {
        var pool = new CSPThreadPool();

        Thread processThread = await RunOneProcessAsync(pool, whileItRuns: pool.Release);

        Assert.Equal(1, pool.ThreadCount);
        Assert.Equal(1, pool.IdleCount);
        Assert.True(processThread.IsAlive);
        Thread reused = (await RunConcurrentlyAsync(pool, 1))[0];
        Assert.Same(processThread, reused);
        pool.Release();
    }

    [Fact]
    public void Release_EmptyPool_DoesNothing()
    {
        var pool = new CSPThreadPool();

        pool.Release();
        pool.Release();

        Assert.Equal(0, pool.ThreadCount);
    }

    // ---- Dispose ----

    [Fact(Timeout = 30000)]
    public async Task Dispose_IdleThreads_ThreadsExit()
    {
        var pool = new CSPThreadPool();
        Thread[] threads = await RunConcurrentlyAsync(pool, 3);

        pool.Dispose();

        AssertAllExit(threads);
        Assert.Equal(0, pool.IdleCount);
        Assert.Equal(0, pool.ThreadCount);
    }

    [Fact(Timeout = 30000)]
    public async Task Dispose_WhileProcessRuns_ProcessEndsThenItsThreadExits()
    {
        var pool = new CSPThreadPool();

        Thread processThread = await RunOneProcessAsync(pool, whileItRuns: pool.Dispose);

        // The process ran to its end; its thread was not kept.
        AssertAllExit([processThread]);
        Assert.Equal(0, pool.IdleCount);
        Assert.Equal(0, pool.ThreadCount);
    }

    [Fact(Timeout = 30000)]
    public async Task Start_AfterDispose_ThrowsObjectDisposedExceptionNamingAWayOut()
    {
        var pool = new CSPThreadPool();
        pool.Dispose();
        pool.Dispose(); // a second Dispose does nothing

        ObjectDisposedException startError = Assert.Throws<ObjectDisposedException>(() => pool.Start(new NothingToRun()));
        Assert.Contains("CSPThreadPool.Default", startError.Message, StringComparison.Ordinal);

        // Through Parallel: refused before anything starts, so the Parallel is not left running.
        int asyncStarts = 0;
        var parallel = new Parallel { ThreadPool = pool };
        parallel.AddProcess(_ =>
        {
            Interlocked.Increment(ref asyncStarts);
            return Task.CompletedTask;
        });
        parallel.AddProcess(() => { });
        Assert.Throws<ObjectDisposedException>(() => { _ = parallel.RunAsync(); });
        Assert.Equal(0, asyncStarts);
        Assert.Equal(0, pool.ThreadCount);
        using var other = new CSPThreadPool();
        parallel.ThreadPool = other;
        await parallel.RunAsync();
        Assert.Equal(1, asyncStarts);
    }

    [Fact]
    public void Dispose_DefaultPool_ThrowsInvalidOperationExceptionAndPoolStaysUsable()
    {
        InvalidOperationException error = Assert.Throws<InvalidOperationException>(CSPThreadPool.Default.Dispose);

        Assert.Contains("shared", error.Message, StringComparison.Ordinal);
        Assert.Contains("Release", error.Message, StringComparison.Ordinal);
    }

    // ---- Start queue ----

    [Fact(Timeout = 60000)]
    public async Task Start_MoreProcessesThanMaxWakingThatWaitForEachOther_EveryOneGetsAThread()
    {
        // No process ends before all have started, so queued starts cannot wait for an ending
        // thread: the threads woken for earlier starts must hand every queued one on.
        var pool = new CSPThreadPool();
        int count = 3 * CSPThreadPool.MaxWaking;

        Thread[] threads = await RunConcurrentlyAsync(pool, count);

        Assert.Equal(count, threads.Distinct().Count());
        Assert.Equal(count, pool.ThreadCount);
        Assert.Equal(0, pool.BusyCount);
        Assert.Equal(count, pool.IdleCount);
        pool.Release();
    }

    [Fact(Timeout = 60000)]
    public async Task Start_ManyShortProcessesOnWarmPool_EachRunsOnceAndEveryThreadEndsIdle()
    {
        var pool = new CSPThreadPool();
        await RunConcurrentlyAsync(pool, CSPThreadPool.MaxWaking);
        int count = 10 * CSPThreadPool.MaxWaking;
        int[] runs = new int[count];
        var parallel = new Parallel { ThreadPool = pool };
        for (int i = 0; i < count; i++)
        {
            int index = i;
            parallel.AddProcess(() => Interlocked.Increment(ref runs[index]));
        }

        for (int round = 0; round < 3; round++)
        {
            await parallel.RunAsync();
        }

        // Queued starts ran on threads the pool had (woken, or taking the next start as their
        // process ended), or on new ones only while none was idle: never more than the run's width.
        Assert.All(runs, r => Assert.Equal(3, r));
        Assert.InRange(pool.ThreadCount, CSPThreadPool.MaxWaking, count);
        Assert.Equal(0, pool.BusyCount);
        Assert.Equal(pool.ThreadCount, pool.IdleCount);
        pool.Release();
    }

    // ---- Priority ----

    // On Linux the .NET 10 runtime only records the priority: Thread.Priority reads it back, but
    // the thread's nice value and scheduling policy stay unchanged (checked in
    // /proc/thread-self/stat, even as root). The scheduling effect is not observable in a test on
    // any OS anyway, so these tests assert what is: the priority the thread reports while it runs
    // the process.
    [Theory(Timeout = 30000)]
    [InlineData(ThreadPriority.Lowest)]
    [InlineData(ThreadPriority.BelowNormal)]
    [InlineData(ThreadPriority.Normal)]
    [InlineData(ThreadPriority.AboveNormal)]
    [InlineData(ThreadPriority.Highest)]
    public async Task AddProcess_WithPriority_ThreadRunsAtThatPriority(ThreadPriority priority)
    {
        var pool = new CSPThreadPool();
        ThreadPriority seen = (ThreadPriority)(-1);
        var parallel = new Parallel { ThreadPool = pool };
        parallel.AddProcess(new ActionProcess(() => seen = Thread.CurrentThread.Priority), priority);

        await parallel.RunAsync();

        Assert.Equal(priority, seen);
        pool.Release();
    }

    [Fact(Timeout = 30000)]
    public async Task AddProcess_ReusedThreadAfterHighPriorityProcess_NextProcessGetsItsOwnPriority()
    {
        var pool = new CSPThreadPool();
        var seen = new List<(int ThreadId, ThreadPriority Priority)>();
        void Record() => seen.Add((Environment.CurrentManagedThreadId, Thread.CurrentThread.Priority));

        var first = new Parallel { ThreadPool = pool };
        first.AddProcess(new ActionProcess(Record), ThreadPriority.Highest);
        await first.RunAsync();
        var second = new Parallel { ThreadPool = pool };
        second.AddProcess(Record);
        await second.RunAsync();
        var third = new Parallel { ThreadPool = pool };
        third.AddProcess(new ActionProcess(Record), ThreadPriority.Lowest);
        await third.RunAsync();

        Assert.Equal(3, seen.Count);
        Assert.Single(seen.Select(s => s.ThreadId).Distinct());
        Assert.Equal([ThreadPriority.Highest, ThreadPriority.Normal, ThreadPriority.Lowest], seen.Select(s => s.Priority));
        pool.Release();
    }

    // ---- Helpers ----

    /// <summary>
    /// Runs <paramref name="count"/> thread processes on <paramref name="pool"/> that are all
    /// running at the same time (each waits for all to have started), so the pool must give each
    /// its own thread; returns the threads they ran on.
    /// </summary>
    private static async Task<Thread[]> RunConcurrentlyAsync(CSPThreadPool pool, int count, Action? whileAllRun = null)
    {
        using var allStarted = new CountdownEvent(count);
        var threads = new Thread[count];
        var parallel = new Parallel { ThreadPool = pool };
        for (int i = 0; i < count; i++)
        {
            int index = i;
            parallel.AddProcess(() =>
            {
                threads[index] = Thread.CurrentThread;
                allStarted.Signal();
                Assert.True(allStarted.Wait(WaitLimit), "The processes did not all run at once.");
                whileAllRun?.Invoke();
            });
        }

        await parallel.RunAsync();
        return threads;
    }

    /// <summary>
    /// Runs one thread process on <paramref name="pool"/>, calls <paramref name="whileItRuns"/>
    /// while it surely runs (it cannot end before a value is written to it), lets it end, and
    /// returns the thread it ran on.
    /// </summary>
    private static async Task<Thread> RunOneProcessAsync(CSPThreadPool pool, Action whileItRuns)
    {
        var gate = new One2OneChannel<int>();
        Thread? processThread = null;
        var parallel = new Parallel { ThreadPool = pool };
        parallel.AddProcess(() =>
        {
            processThread = Thread.CurrentThread;
            gate.Read();
        });

        Task run = parallel.RunAsync();
        Assert.Equal(1, pool.BusyCount);
        whileItRuns();
        await gate.WriteAsync(1);
        await run;
        return processThread!;
    }

    /// <summary>Threads exit on their own after a release: wait for each (bounded), no sleeps.</summary>
    private static void AssertAllExit(Thread[] threads)
    {
        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(WaitLimit), $"{thread.Name} did not exit.");
        }
    }

    /// <summary>
    /// The most stack a thread created with <paramref name="requested"/> bytes may really get.
    /// Windows reserves what was asked. glibc (Linux) keeps the stacks of exited threads in a cache
    /// and hands a new thread the smallest cached stack at least as large as asked, provided it is
    /// at most four times as large: so after a test (or the runtime) has ended a 1 MiB thread, a
    /// 512 KiB request may get that 1 MiB stack. The pool cannot prevent this; the bound still
    /// separates 512 KiB from the 8 MiB default.
    /// </summary>
    private static long MostStackGranted(int requested) => OperatingSystem.IsWindows() ? requested : 4L * requested;

    /// <summary>Measures, in a process on <paramref name="pool"/>, how much stack that process can use.</summary>
    private static async Task<long> MeasureUsableStackAsync(CSPThreadPool pool)
    {
        long usable = 0;
        var parallel = new Parallel { ThreadPool = pool };
        parallel.AddProcess(() => usable = UsableStack());
        await parallel.RunAsync();
        return usable;
    }

    /// <summary>
    /// Recurses with <see cref="FrameBytes"/>-byte stack frames until the runtime says the stack is
    /// nearly exhausted, counting the bytes of those frames (an underestimate of the stack used).
    /// </summary>
    private static long UsableStack()
    {
        long used = 0;
        Recurse(ref used);
        return used;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Recurse(ref long used)
    {
        Span<byte> frame = stackalloc byte[FrameBytes];
        frame[0] = 1;
        if (!RuntimeHelpers.TryEnsureSufficientExecutionStack())
        {
            return;
        }

        used += FrameBytes;
        Recurse(ref used);
        GC.KeepAlive(frame[FrameBytes - 1]);
    }

    /// <summary>A start with nothing to run, for the pool's own checks.</summary>
    private sealed class NothingToRun : IPooledStart
    {
        public ThreadPriority Priority => ThreadPriority.Normal;

        public void Run()
        {
        }

        public void Ended()
        {
        }
    }
}
