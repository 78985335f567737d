using System.Collections.Concurrent;
using static CspNet.Tests.Processes.ProcessTestHelpers;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Processes;

/// <summary><see cref="Parallel"/>: running, mixing process kinds, nesting, reruns and arguments.</summary>
public class ParallelTests
{
    // ---- Running ----

    [Fact(Timeout = 30000)]
    public async Task Run_SeveralThreadProcesses_RunsAllAndReturnsAfterAllEnded()
    {
        const int Count = 8;
        int ended = 0;
        var results = new Any2OneChannel<int>();
        var parallel = new Parallel();
        for (int i = 0; i < Count - 1; i++)
        {
            int value = i;
            parallel.AddProcess(() =>
            {
                results.Write(value);
                Interlocked.Increment(ref ended);
            });
        }

        int sum = 0;
        parallel.AddProcess(() =>
        {
            for (int i = 0; i < Count - 1; i++)
            {
                sum += results.Read();
            }

            Interlocked.Increment(ref ended);
        });

        await OnOwnThread(parallel.Run);

        Assert.Equal(Count, Volatile.Read(ref ended));
        Assert.Equal(Enumerable.Range(0, Count - 1).Sum(), sum);
    }

    [Fact(Timeout = 30000)]
    public async Task Run_ProcessStillBlocked_DoesNotReturnUntilItEnds()
    {
        var gate = new One2OneChannel<int>();
        bool blockedProcessEnded = false;
        var parallel = new Parallel();
        parallel.AddProcess(() => { });
        parallel.AddProcess(() =>
        {
            gate.Read();
            gate.Read();
            blockedProcessEnded = true;
        });

        Task run = OnOwnThread(parallel.Run);
        await gate.WriteAsync(1);

        // The process has started and cannot end before a second value comes: Run must still block.
        Assert.False(run.IsCompleted);
        await gate.WriteAsync(2);
        await run;
        Assert.True(blockedProcessEnded);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ProcessStillBlocked_TaskIncompleteUntilItEnds()
    {
        var gate = new One2OneChannel<int>();
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var parallel = new Parallel();
        parallel.AddProcess(() =>
        {
            started.SetResult();
            gate.Read();
        });

        Task run = parallel.RunAsync();
        await started.Task;

        // The process is between its start and the rendezvous it cannot finish alone.
        Assert.False(run.IsCompleted);
        await gate.WriteAsync(1);
        await run;
        Assert.True(run.IsCompletedSuccessfully);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ThreadAndAsyncProcessesOfEveryKind_CommunicateOverChannels()
    {
        // ICSPProcess -> IAsyncCSPProcess -> Func<CancellationToken, Task> -> Action, each link a
        // rendezvous channel between a thread process and an async one; poison ends the pipeline.
        const int Count = 100;
        var numbers = new One2OneChannel<int>();
        var doubled = new One2OneChannel<int>();
        var odd = new One2OneChannel<int>();
        long sum = 0;
        var parallel = new Parallel();
        parallel.AddProcess(new CountingProducer(numbers, Count));
        parallel.AddProcess(new AsyncDoubler(numbers, doubled));
        parallel.AddProcess(async cancellationToken =>
        {
            await foreach (int value in doubled.ReadAllAsync(cancellationToken))
            {
                await odd.WriteAsync(value + 1, cancellationToken);
            }

            odd.Poison();
        });
        parallel.AddProcess(() =>
        {
            foreach (int value in odd.ReadAll())
            {
                sum += value;
            }
        });

        Assert.Equal(4, parallel.Count);
        await parallel.RunAsync();

        Assert.Equal((2L * Count * (Count + 1) / 2) + Count, sum);
    }

    [Fact(Timeout = 30000)]
    public async Task Run_ThreadProcessesOnly_BlockingCallerReturnsAfterPipelineDrains()
    {
        var numbers = new One2OneChannel<int>();
        var doubled = new One2OneChannel<int>();
        var received = new List<int>();
        var parallel = new Parallel(
            new CountingProducer(numbers, 5),
            new ActionProcess(() =>
            {
                foreach (int value in numbers.ReadAll())
                {
                    doubled.Write(value * 2);
                }

                doubled.Poison();
            }),
            new ActionProcess(() => received.AddRange(doubled.ReadAll())));

        await OnOwnThread(parallel.Run);

        Assert.Equal([2, 4, 6, 8, 10], received);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_AsyncProcessesOnly_Completes()
    {
        var channel = new One2OneChannel<int>();
        int received = 0;
        var parallel = new Parallel(
            new AsyncActionProcess(async ct => await channel.WriteAsync(7, ct)),
            new AsyncActionProcess(async ct => received = await channel.ReadAsync(ct)));

        await parallel.RunAsync();

        Assert.Equal(7, received);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_CancellationToken_IsPassedToAsyncProcesses()
    {
        using var cts = new CancellationTokenSource();
        var channel = new One2OneChannel<int>();
        CancellationToken seen = default;
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var parallel = new Parallel();
        parallel.AddProcess(async cancellationToken =>
        {
            seen = cancellationToken;
            started.SetResult();
            await channel.ReadAsync(cancellationToken); // no writer: only cancellation ends it
        });

        Task run = parallel.RunAsync(cts.Token);
        await started.Task;
        await cts.CancelAsync();

        // Every error is the cancellation of the run's own token: the run ends Canceled.
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => run);
        Assert.True(run.IsCanceled);
        Assert.Equal(cts.Token, seen);
    }

    // ---- Async processes start concurrently ----

    [Fact(Timeout = 30000)]
    public async Task RunAsync_AsyncProcessesThatBlockBeforeAwaiting_StartConcurrently()
    {
        // Both bodies are synchronous (they never await) and block their thread in a handshake
        // with each other. If RunAsync ran an async process's synchronous part on the caller's
        // thread before starting the next, the first would wait in vain for the second and fail.
        // (Not with a CspNet channel: its blocking calls refuse to run inside an async process.)
        using var firstArrived = new ManualResetEventSlim();
        using var secondArrived = new ManualResetEventSlim();
        bool firstMet = false;
        bool secondMet = false;
        var parallel = new Parallel();
        parallel.AddProcess(_ =>
        {
            firstArrived.Set();
            firstMet = secondArrived.Wait(WaitLimit, CancellationToken.None);
            return Task.CompletedTask;
        });
        parallel.AddProcess(_ =>
        {
            secondArrived.Set();
            secondMet = firstArrived.Wait(WaitLimit, CancellationToken.None);
            return Task.CompletedTask;
        });

        Task run = await OnOwnThread(() => parallel.RunAsync());
        await run;

        Assert.True(firstMet);
        Assert.True(secondMet);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_CpuBoundAsyncProcess_DoesNotDelayTheOthersStart()
    {
        // The first process computes without awaiting until the second has started; it gives up
        // (and fails the test) after WaitLimit.
        bool secondStarted = false;
        bool sawSecondStart = false;
        var parallel = new Parallel();
        parallel.AddProcess(_ =>
        {
            sawSecondStart = SpinWait.SpinUntil(() => Volatile.Read(ref secondStarted), WaitLimit);
            return Task.CompletedTask;
        });
        parallel.AddProcess(_ =>
        {
            Volatile.Write(ref secondStarted, true);
            return Task.CompletedTask;
        });

        Task run = await OnOwnThread(() => parallel.RunAsync());
        await run;

        Assert.True(sawSecondStart);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_AsyncProcessBlocksSynchronously_ReturnsToCallerAtOnce()
    {
        using var release = new ManualResetEventSlim();
        var parallel = new Parallel();
        parallel.AddProcess(_ =>
        {
            Assert.True(release.Wait(WaitLimit, CancellationToken.None));
            return Task.CompletedTask;
        });

        Task run = await OnOwnThread(() => parallel.RunAsync());

        Assert.False(run.IsCompleted);
        release.Set();
        await run;
    }

    // ---- Nesting ----

    [Fact(Timeout = 30000)]
    public async Task Run_NestedParallels_RunAsPartOfTheOuterOne()
    {
        var numbers = new One2OneChannel<int>();
        var doubled = new One2OneChannel<int>();
        long sum = 0;
        var producers = new Parallel(new ICSPProcess[] { new CountingProducer(numbers, 10) });
        var doublers = new Parallel(new IAsyncCSPProcess[] { new AsyncDoubler(numbers, doubled) });
        var consumers = new Parallel();
        consumers.AddProcess(() =>
        {
            foreach (int value in doubled.ReadAll())
            {
                sum += value;
            }
        });

        var outer = new Parallel();
        outer.AddProcess(producers);                        // as a Parallel
        outer.AddProcess((IAsyncCSPProcess)doublers);       // as an async process
        outer.AddProcess((ICSPProcess)consumers, ThreadPriority.AboveNormal); // as a thread process

        await OnOwnThread(outer.Run);

        Assert.Equal(110, sum);
    }

    [Fact(Timeout = 30000)]
    public async Task Run_ParallelAsProcessInterfaces_RunsItsProcesses()
    {
        int count = 0;
        var parallel = new Parallel();
        parallel.AddProcess(() => Interlocked.Increment(ref count));
        parallel.AddProcess(_ =>
        {
            Interlocked.Increment(ref count);
            return Task.CompletedTask;
        });

        await OnOwnThread(((ICSPProcess)parallel).Run);
        await ((IAsyncCSPProcess)parallel).RunAsync(CancellationToken.None);

        Assert.Equal(4, count);
    }

    // ---- Empty, rerun, overlap ----

    [Fact(Timeout = 10000)]
    public async Task Run_Empty_ReturnsAtOnce()
    {
        var parallel = new Parallel();

        await OnOwnThread(parallel.Run);

        Assert.True(parallel.RunAsync().IsCompletedSuccessfully);
        Assert.True(new Parallel(Array.Empty<ICSPProcess>()).RunAsync().IsCompletedSuccessfully);
        Assert.Equal(0, parallel.Count);
    }

    [Fact(Timeout = 30000)]
    public async Task Run_TwiceSequentially_RunsEveryProcessEachTime()
    {
        int threadRuns = 0;
        int asyncRuns = 0;
        var parallel = new Parallel();
        parallel.AddProcess(() => Interlocked.Increment(ref threadRuns));
        parallel.AddProcess(async _ =>
        {
            await Task.Yield();
            Interlocked.Increment(ref asyncRuns);
        });

        await OnOwnThread(parallel.Run);
        await OnOwnThread(parallel.Run);
        await parallel.RunAsync();

        Assert.Equal(3, threadRuns);
        Assert.Equal(3, asyncRuns);
    }

    [Fact(Timeout = 30000)]
    public async Task Run_WhileRunning_ThrowsInvalidOperationException()
    {
        var gate = new One2OneChannel<int>();
        int runs = 0;
        var parallel = new Parallel();
        parallel.AddProcess(() =>
        {
            Interlocked.Increment(ref runs);
            gate.Read();
        });

        Task first = parallel.RunAsync();

        await Assert.ThrowsAsync<InvalidOperationException>(() => OnOwnThread(parallel.Run));
        Assert.Throws<InvalidOperationException>(() => { _ = parallel.RunAsync(); });
        Assert.Throws<InvalidOperationException>(() => parallel.AddProcess(() => { }));
        await gate.WriteAsync(1);
        await first;

        // The failed attempts started nothing; once the run has ended, it may run again.
        Assert.Equal(1, runs);
        Task second = parallel.RunAsync();
        await gate.WriteAsync(2);
        await second;
        Assert.Equal(2, runs);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_SameNestedParallelTwiceInOneRun_SecondStartFailsAndTheFirstRuns()
    {
        int runs = 0;
        var nested = new Parallel();
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        nested.AddProcess(async _ =>
        {
            Interlocked.Increment(ref runs);
            await gate.Task;
        });
        var outer = new Parallel();
        outer.AddProcess(nested);
        outer.AddProcess(nested);

        Task run = outer.RunAsync();
        gate.SetResult();
        Exception error = await Assert.ThrowsAnyAsync<Exception>(() => run);

        Assert.IsType<InvalidOperationException>(Assert.Single(run.Exception!.InnerExceptions));
        Assert.Same(error, run.Exception.InnerExceptions[0]);
        Assert.Equal(1, runs);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_NestedParallelRunningOnItsOwn_OuterRunGetsInvalidOperationException()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var nested = new Parallel();
        nested.AddProcess(_ => gate.Task);
        var outer = new Parallel();
        outer.AddProcess(nested);
        outer.AddProcess(_ => Task.CompletedTask);

        Task alone = nested.RunAsync();
        Task run = outer.RunAsync();

        await Assert.ThrowsAsync<InvalidOperationException>(() => run);
        Assert.False(alone.IsCompleted);
        gate.SetResult();
        await alone;
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_NestedTreeRunTwice_RunsEveryLeafEachTimeAndNestedParallelsCanRunAlone()
    {
        int runs = 0;
        var leaves = new Parallel[3];
        var outer = new Parallel();
        for (int i = 0; i < leaves.Length; i++)
        {
            leaves[i] = new Parallel(new CountingProcess(() => Interlocked.Increment(ref runs)), new CountingProcess(() => Interlocked.Increment(ref runs)));
            outer.AddProcess(new Parallel(leaves[i], new Parallel()));
        }

        await outer.RunAsync();
        await outer.RunAsync();
        await leaves[1].RunAsync();

        Assert.Equal((2 * 6) + 2, runs);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ProcessEndsBeforeAwaiting_CountsOnceAndRunEnds()
    {
        // A process whose task is complete when RunAsync returns ends without a continuation.
        int runs = 0;
        var parallel = new Parallel(new CountingProcess(() => Interlocked.Increment(ref runs)), new CountingProcess(() => Interlocked.Increment(ref runs)));

        await parallel.RunAsync();

        Assert.Equal(2, runs);
    }

    private sealed class CountingProcess(Action count) : IAsyncCSPProcess
    {
        public Task RunAsync(CancellationToken cancellationToken)
        {
            count();
            return Task.CompletedTask;
        }
    }

    // ---- Arguments ----

    [Fact]
    public void Constructors_NullArray_ThrowArgumentNullException()
    {
        Assert.Throws<ArgumentNullException>("processes", () => new Parallel((ICSPProcess[])null!));
        Assert.Throws<ArgumentNullException>("processes", () => new Parallel((IAsyncCSPProcess[])null!));
        Assert.Throws<ArgumentNullException>("process", () => new Parallel(new ICSPProcess[] { null! }));
        Assert.Throws<ArgumentNullException>("process", () => new Parallel(new IAsyncCSPProcess[] { null! }));
        Assert.Throws<ArgumentNullException>("processes", () => new Parallel((Parallel[])null!));
        Assert.Throws<ArgumentNullException>("process", () => new Parallel(new Parallel(), null!));
        Assert.Throws<ArgumentNullException>("process", () => new Parallel(new AsyncActionProcess(_ => Task.CompletedTask), null!));
        Assert.Throws<ArgumentNullException>("process", () => new Parallel(new ActionProcess(() => { }), null!));
    }

    [Fact(Timeout = 30000)]
    public async Task Constructors_ProcessesAsArguments_AllocateNoArgumentArrayAndRun()
    {
        // new Parallel(a, b) binds to the params ReadOnlySpan constructors: the parallel is the only allocation.
        int runs = 0;
        var first = new AsyncActionProcess(_ =>
        {
            Interlocked.Increment(ref runs);
            return Task.CompletedTask;
        });
        var second = new AsyncActionProcess(_ =>
        {
            Interlocked.Increment(ref runs);
            return Task.CompletedTask;
        });
        _ = new Parallel(first, second);
        long before = GC.GetAllocatedBytesForCurrentThread();
        var pair = new Parallel(first, second);
        long alone = GC.GetAllocatedBytesForCurrentThread() - before;
        before = GC.GetAllocatedBytesForCurrentThread();
        var withArray = new Parallel(new IAsyncCSPProcess[] { first, second });
        long withArrayBytes = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.True(alone < withArrayBytes, $"new Parallel(a, b) allocated {alone} B, with an explicit array {withArrayBytes} B");
        await new Parallel(pair, withArray).RunAsync();
        await new Parallel(new ActionProcess(() => Interlocked.Increment(ref runs)), new ActionProcess(() => Interlocked.Increment(ref runs))).RunAsync();
        Assert.Equal(6, runs);
    }

    [Fact]
    public void AddProcess_Null_ThrowsArgumentNullException()
    {
        var parallel = new Parallel();

        Assert.Throws<ArgumentNullException>("process", () => parallel.AddProcess((ICSPProcess)null!));
        Assert.Throws<ArgumentNullException>("process", () => parallel.AddProcess(null!, ThreadPriority.Highest));
        Assert.Throws<ArgumentNullException>("process", () => parallel.AddProcess((IAsyncCSPProcess)null!));
        Assert.Throws<ArgumentNullException>("process", () => parallel.AddProcess((Parallel)null!));
        Assert.Throws<ArgumentNullException>("run", () => parallel.AddProcess((Action)null!));
        Assert.Throws<ArgumentNullException>("runAsync", () => parallel.AddProcess((Func<CancellationToken, Task>)null!));
        Assert.Equal(0, parallel.Count);
    }

    [Fact(Timeout = 30000)]
    public async Task ThreadPool_SetToNull_ThrowsArgumentNullException()
    {
        // ThreadPool is a non-nullable property. Without a check, null is accepted and the next
        // run fails half-way: RunAsync has already marked the Parallel as running and started the
        // async processes before it dereferences the null pool for the first thread process.
        var parallel = new Parallel();
        int asyncStarts = 0;
        parallel.AddProcess(_ =>
        {
            Interlocked.Increment(ref asyncStarts);
            return Task.CompletedTask;
        });
        parallel.AddProcess(() => { });

        Exception? setError = Record.Exception(() => parallel.ThreadPool = null!);
        if (setError is null)
        {
            // Show what the missing check costs before failing on it.
            Exception? runError = Record.Exception(() => { _ = parallel.RunAsync(); });
            parallel.ThreadPool = CSPThreadPool.Default;
            Exception? rerunError = Record.Exception(() => { _ = parallel.RunAsync(); });
            Assert.Fail(
                "Parallel.ThreadPool accepted null. The next RunAsync threw " +
                $"{runError?.GetType().Name ?? "nothing"}; after restoring the pool, RunAsync threw " +
                $"{rerunError?.GetType().Name ?? "nothing"} (the Parallel stays marked as running).");
        }

        Assert.IsType<ArgumentNullException>(setError);
        Assert.Same(CSPThreadPool.Default, parallel.ThreadPool);
        await parallel.RunAsync();
        Assert.Equal(1, asyncStarts);
    }
}
