using CspNet.Internal.Processes;
using static CspNet.Tests.Processes.ProcessTestHelpers;
using Barrier = CspNet.Barrier;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Processes;

/// <summary>
/// A blocking CspNet call made inside an async process would hold a .NET thread-pool thread
/// (thousands of them starve the pool): it throws <see cref="InvalidOperationException"/> naming
/// the async twin. Thread processes, and code outside any process, may still block.
/// </summary>
public class BlockingInAsyncProcessTests
{
    /// <summary>
    /// A blocking call of each kind this test class covers, set up so that, where blocking is
    /// allowed, it returns or throws at once instead of waiting.
    /// </summary>
    public static TheoryData<string> BlockingCalls => ["Barrier.Sync", "Bucket.Fall", "Parallel.Run", "ReadAll", "Channel.Read", "Channel.Write", "In.Read", "Alternative.Select", "CSTimer.Sleep"];

    [Theory(Timeout = 30000)]
    [InlineData("Barrier.Sync", false)]
    [InlineData("Barrier.Sync", true)]
    [InlineData("Bucket.Fall", false)]
    [InlineData("Bucket.Fall", true)]
    [InlineData("Parallel.Run", false)]
    [InlineData("Parallel.Run", true)]
    [InlineData("ReadAll", false)]
    [InlineData("ReadAll", true)]
    [InlineData("Channel.Read", false)]
    [InlineData("Channel.Read", true)]
    [InlineData("Channel.Write", true)]
    [InlineData("In.Read", true)]
    [InlineData("Alternative.Select", false)]
    [InlineData("Alternative.Select", true)]
    [InlineData("CSTimer.Sleep", true)]
    public async Task BlockingCall_InAsyncProcess_ThrowsInvalidOperationExceptionNamingTheAsyncTwin(string call, bool afterAnAwait)
    {
        (Action blocking, string blockingName, string asyncTwin) = Setup(call);
        var parallel = new Parallel();
        parallel.AddProcess(async _ =>
        {
            if (afterAnAwait)
            {
                await Task.Yield();
            }

            blocking();
        });

        Task run = parallel.RunAsync();
        await Assert.ThrowsAnyAsync<Exception>(() => run);

        var error = Assert.IsType<InvalidOperationException>(Assert.Single(run.Exception!.InnerExceptions));
        Assert.StartsWith($"{blockingName} would block a thread-pool thread", error.Message, StringComparison.Ordinal);
        Assert.Contains("IAsyncCSPProcess", error.Message, StringComparison.Ordinal);
        Assert.Contains($"'{asyncTwin}'", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30000)]
    public async Task BlockingCall_InAsyncProcessOfRunWithFlowSuppressed_Throws()
    {
        // The caller suppressed execution-context flow: the process starts in a clean context,
        // which must still mark it as an async process.
        var parallel = new Parallel();
        parallel.AddProcess(_ =>
        {
            new Barrier(1).Sync();
            return Task.CompletedTask;
        });

        Task run;
        using (ExecutionContext.SuppressFlow())
        {
            run = parallel.RunAsync();
        }

        await Assert.ThrowsAsync<InvalidOperationException>(() => run);
    }

    [Fact(Timeout = 30000)]
    public async Task ThrowIfBlockingInAsyncProcess_InAsyncProcess_MessageNamesCallAndAwaitedTwin()
    {
        var messages = new List<string>();
        var parallel = new Parallel();
        parallel.AddProcess(async _ =>
        {
            await Task.Yield();
            messages.Add(Assert.Throws<InvalidOperationException>(() => ProcessContext.ThrowIfBlockingInAsyncProcess("Read()", "ReadAsync()")).Message);
            messages.Add(Assert.Throws<InvalidOperationException>(() => ProcessContext.ThrowIfBlockingInAsyncProcess("Select()", "await SelectAsync()")).Message);
        });

        await parallel.RunAsync();

        Assert.StartsWith(
            "Read() would block a thread-pool thread: this code runs inside an async CspNet process (IAsyncCSPProcess). Use 'await ReadAsync()' instead",
            messages[0],
            StringComparison.Ordinal);
        Assert.Contains("Use 'await SelectAsync()' instead", messages[1], StringComparison.Ordinal);
    }

    [Fact]
    public void ThrowIfBlockingInAsyncProcess_OutsideAnyProcess_DoesNothing() =>
        ProcessContext.ThrowIfBlockingInAsyncProcess("Read()", "ReadAsync()");

    [Theory(Timeout = 30000)]
    [MemberData(nameof(BlockingCalls))]
    public async Task BlockingCall_InThreadProcessStartedFromAsyncProcess_MayBlock(string call)
    {
        // The thread process inherits the async process's execution context; neither its own
        // thread nor a thread-pool thread it hands work to counts as inside an async process.
        var outer = new Parallel();
        outer.AddProcess(async cancellationToken =>
        {
            var inner = new Parallel();
            inner.AddProcess(() =>
            {
                Setup(call).Blocking();
                Task.Run(Setup(call).Blocking).GetAwaiter().GetResult();
            });
            await inner.RunAsync(cancellationToken);
        });

        await outer.RunAsync();
    }

    [Theory(Timeout = 30000)]
    [MemberData(nameof(BlockingCalls))]
    public async Task BlockingCall_OnThreadPoolOutsideAnyProcess_MayBlock(string call)
    {
        await Task.Run(Setup(call).Blocking);

        // Nor does having awaited a run of async processes make the caller one.
        var asyncOnly = new Parallel();
        asyncOnly.AddProcess(async _ => await Task.Yield());
        await Task.Run(async () =>
        {
            await asyncOnly.RunAsync();
            Setup(call).Blocking();
        });
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ManyWaitingAsyncProcessesAndNestedParallels_HoldNoThreadPoolThreadEach()
    {
        // Every process waits for all the others to have started. If a waiting process (or a
        // nested Parallel, which runs as one) held a thread-pool thread, the pool would need
        // about as many threads as processes, and on a small machine would add them far too
        // slowly for this test's timeout.
        const int Nested = 10;
        const int PerParallel = 100;
        const int Total = (Nested + 1) * PerParallel;
        var allStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int started = 0;
        async Task WaitForAll(CancellationToken cancellationToken)
        {
            if (Interlocked.Increment(ref started) == Total)
            {
                allStarted.SetResult();
            }

            await allStarted.Task.WaitAsync(cancellationToken);
        }

        var outer = new Parallel();
        for (int n = 0; n < Nested; n++)
        {
            var nested = new Parallel();
            for (int i = 0; i < PerParallel; i++)
            {
                nested.AddProcess(WaitForAll);
            }

            outer.AddProcess(nested);
        }

        for (int i = 0; i < PerParallel; i++)
        {
            outer.AddProcess(WaitForAll);
        }

        await OnOwnThread(outer.Run);

        Assert.Equal(Total, started);
    }

    /// <summary>
    /// The blocking call named <paramref name="call"/>, on an object prepared so that it does not
    /// wait when it is allowed to run (a barrier of one, a poisoned bucket or channel, a trivial
    /// Parallel), with the names the error must give.
    /// </summary>
    private static (Action Blocking, string BlockingName, string AsyncTwin) Setup(string call)
    {
        switch (call)
        {
            case "Barrier.Sync":
                var barrier = new Barrier(1);
                return (barrier.Sync, "Sync()", "await SyncAsync()");
            case "Bucket.Fall":
                var bucket = new Bucket();
                bucket.Poison();
                return (() => FallIntoPoisoned(bucket), "Fall()", "await FallAsync()");
            case "Parallel.Run":
                var parallel = new Parallel();
                parallel.AddProcess(() => { });
                return (parallel.Run, "Run()", "await RunAsync()");
            case "ReadAll":
                var channel = new One2OneChannel<int>();
                channel.Poison();
                return (() => Assert.Empty(channel.ReadAll()), "ReadAll()", "await foreach (var item in ReadAllAsync())");
            case "Channel.Read":
                var readable = new One2OneChannel<int>(new FifoBuffer<int>(1));
                readable.Write(1);
                return (() => readable.Read(), "Read()", "await ReadAsync()");
            case "Channel.Write":
                var writable = new One2OneChannel<int>(new FifoBuffer<int>(1));
                return (() => writable.Write(1), "Write(value)", "await WriteAsync(value)");
            case "In.Read":
                var viaEnd = new One2OneChannel<int>(new FifoBuffer<int>(1));
                viaEnd.Write(1);
                return (() => viaEnd.In.Read(), "Read()", "await ReadAsync()");
            case "Alternative.Select":
                var alternative = new Alternative(new Skip());
                return (() => alternative.Select(), "Select()", "await SelectAsync()");
            case "CSTimer.Sleep":
                var timer = new CSTimer();
                return (() => timer.Sleep(0), "Sleep(milliseconds)", "await SleepAsync(milliseconds)");
            default:
                throw new ArgumentOutOfRangeException(nameof(call), call, "Unknown blocking call.");
        }
    }

    /// <summary>Falls into a poisoned bucket: when falling is allowed, it fails at once with poison.</summary>
    private static void FallIntoPoisoned(Bucket bucket)
    {
        try
        {
            bucket.Fall();
            Assert.Fail("A fall into a poisoned bucket returned.");
        }
        catch (PoisonException)
        {
            // Allowed to block, and did not need to.
        }
    }
}
