using Parallel = CspNet.Parallel;
using static CspNet.Tests.Processes.ProcessTestHelpers;

namespace CspNet.Tests.Processes;

/// <summary>
/// <see cref="Parallel"/> failure handling: every process's exception is reported in one
/// <see cref="AggregateException"/>, only after every process has ended; poison is how a failing
/// process makes its partners end.
/// </summary>
public class ParallelExceptionTests
{
    [Fact(Timeout = 30000)]
    public async Task Run_FailingProcessPoisonsItsChannel_BlockedPartnerGetsPoisonAndRunThrowsAggregate()
    {
        // The documented pattern: a process that fails poisons its channels in a finally block,
        // so the partner blocked on the channel gets PoisonException and ends too.
        var channel = new One2OneChannel<int>();
        using var partnerReading = new ManualResetEventSlim();
        var failure = new InvalidOperationException("The job failed.");
        Exception? partnerSaw = null;
        bool partnerEnded = false;
        var parallel = new Parallel();
        parallel.AddProcess(() =>
        {
            try
            {
                Assert.True(partnerReading.Wait(WaitLimit));
                throw failure;
            }
            finally
            {
                channel.Poison();
            }
        });
        parallel.AddProcess(() =>
        {
            try
            {
                partnerReading.Set();
                channel.Read(); // nobody will ever write: only poison ends this
            }
            catch (PoisonException e)
            {
                partnerSaw = e;
            }

            partnerEnded = true;
        });

        AggregateException error = await Assert.ThrowsAsync<AggregateException>(() => OnOwnThread(parallel.Run));

        Assert.Same(failure, Assert.Single(error.InnerExceptions));
        Assert.IsType<PoisonException>(partnerSaw);
        Assert.True(partnerEnded);
    }

    [Fact(Timeout = 30000)]
    public async Task Run_PoisonSpreadsThroughPipeline_AggregateHoldsEveryProcessException()
    {
        // failing -> c1 -> middle (thread) -> c2 -> last (async). Neither partner catches the
        // poison: each lets PoisonException end it, the middle one poisoning c2 on its way out.
        var c1 = new One2OneChannel<int>();
        var c2 = new One2OneChannel<int>();
        var failure = new InvalidOperationException("The producer failed.");
        var parallel = new Parallel();
        parallel.AddProcess(() =>
        {
            try
            {
                c1.Write(1);
                throw failure;
            }
            finally
            {
                c1.Poison();
            }
        });
        parallel.AddProcess(() =>
        {
            try
            {
                while (true)
                {
                    c2.Write(c1.Read());
                }
            }
            finally
            {
                c2.Poison();
            }
        });
        int lastReceived = 0;
        parallel.AddProcess(async cancellationToken =>
        {
            while (true)
            {
                lastReceived += await c2.ReadAsync(cancellationToken);
            }
        });

        AggregateException error = await Assert.ThrowsAsync<AggregateException>(() => OnOwnThread(parallel.Run));

        Assert.Equal(3, error.InnerExceptions.Count);
        Assert.Contains(failure, error.InnerExceptions);
        Assert.Equal(2, error.InnerExceptions.Count(e => e is PoisonException));
        Assert.Equal(1, lastReceived);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_SeveralProcessesThrow_AggregateHoldsEachException()
    {
        var threadFailure = new InvalidOperationException("thread process");
        var asyncFailure = new ArgumentException("async process after an await");
        var syncAsyncFailure = new FormatException("async process before returning its task");
        var classFailure = new NotSupportedException("async process class");
        var parallel = new Parallel();
        parallel.AddProcess(() => throw threadFailure);
        parallel.AddProcess(async _ =>
        {
            await Task.Yield();
            throw asyncFailure;
        });
        parallel.AddProcess(_ => throw syncAsyncFailure);
        parallel.AddProcess(new AsyncActionProcess(_ => Task.FromException(classFailure)));
        parallel.AddProcess(() => { });

        AggregateException error = await Assert.ThrowsAsync<AggregateException>(() => parallel.RunAsync());

        Assert.Equal(4, error.InnerExceptions.Count);
        Assert.Contains(threadFailure, error.InnerExceptions);
        Assert.Contains(asyncFailure, error.InnerExceptions);
        Assert.Contains(syncAsyncFailure, error.InnerExceptions);
        Assert.Contains(classFailure, error.InnerExceptions);
    }

    [Fact(Timeout = 30000)]
    public async Task Run_SeveralProcessesThrow_ThrowsOneAggregateNotTheFirstException()
    {
        var first = new InvalidOperationException("one");
        var second = new InvalidOperationException("two");
        var parallel = new Parallel();
        parallel.AddProcess(() => throw first);
        parallel.AddProcess(() => throw second);

        // Run() surfaces the AggregateException itself (GetResult would otherwise rethrow only the first).
        AggregateException error = await Assert.ThrowsAsync<AggregateException>(() => OnOwnThread(parallel.Run));

        Assert.Equal(2, error.InnerExceptions.Count);
        Assert.Contains(first, error.InnerExceptions);
        Assert.Contains(second, error.InnerExceptions);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ProcessesThrow_CompletesOnlyAfterTheOthersEnd()
    {
        var thrown = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int throwers = 2;
        void Thrown()
        {
            if (Interlocked.Decrement(ref throwers) == 0)
            {
                thrown.SetResult();
            }
        }

        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        bool survivorEnded = false;
        var parallel = new Parallel();
        parallel.AddProcess(() =>
        {
            try
            {
                throw new InvalidOperationException("thread process");
            }
            finally
            {
                Thrown();
            }
        });
        parallel.AddProcess(async _ =>
        {
            await Task.Yield();
            try
            {
                throw new ArgumentException("async process");
            }
            finally
            {
                Thrown();
            }
        });
        parallel.AddProcess(async _ =>
        {
            await release.Task;
            survivorEnded = true;
        });

        Task run = parallel.RunAsync();
        await thrown.Task;

        // Both failures have happened, but a process is still running: the run is not over.
        Assert.False(run.IsCompleted);
        release.SetResult();
        AggregateException error = await Assert.ThrowsAsync<AggregateException>(() => run);
        Assert.Equal(2, error.InnerExceptions.Count);
        Assert.True(survivorEnded);
    }

    [Fact(Timeout = 30000)]
    public async Task Run_NestedParallelThrows_OuterAggregateHoldsInnerAggregate()
    {
        var failure = new InvalidOperationException("inner process");
        var inner = new Parallel();
        inner.AddProcess(() => throw failure);
        inner.AddProcess(() => { });
        var outer = new Parallel();
        outer.AddProcess(inner);
        outer.AddProcess(() => { });

        AggregateException error = await Assert.ThrowsAsync<AggregateException>(() => OnOwnThread(outer.Run));

        AggregateException innerError = Assert.IsType<AggregateException>(Assert.Single(error.InnerExceptions));
        Assert.Same(failure, Assert.Single(innerError.InnerExceptions));
        Assert.Same(failure, Assert.Single(error.Flatten().InnerExceptions));
    }

    [Fact(Timeout = 30000)]
    public async Task Run_AfterFailedRun_CanRunAgain()
    {
        bool fail = true;
        int runs = 0;
        var parallel = new Parallel();
        parallel.AddProcess(() =>
        {
            runs++;
            if (fail)
            {
                throw new InvalidOperationException("first run fails");
            }
        });

        await Assert.ThrowsAsync<AggregateException>(() => OnOwnThread(parallel.Run));
        fail = false;
        await OnOwnThread(parallel.Run);

        Assert.Equal(2, runs);
    }
}
