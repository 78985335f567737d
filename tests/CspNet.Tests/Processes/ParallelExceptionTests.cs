using System.Collections.ObjectModel;
using static CspNet.Tests.Processes.ProcessTestHelpers;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Processes;

/// <summary>
/// <see cref="Parallel"/> failure handling: every process's exception is reported, only after
/// every process has ended (by <c>Run()</c> in one <see cref="AggregateException"/>, by
/// <c>RunAsync()</c> in the task's <see cref="Task.Exception"/>, as <see cref="Task.WhenAll(Task[])"/>
/// does); poison is how a failing process makes its partners end.
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
    public async Task RunAsync_SeveralProcessesThrow_TaskExceptionHoldsEachExceptionDirectly()
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

        Task run = parallel.RunAsync();

        // await rethrows one of them, as for Task.WhenAll; the task holds them all, not nested.
        Exception awaited = await Assert.ThrowsAnyAsync<Exception>(() => run);
        ReadOnlyCollection<Exception> errors = await FaultsOf(run);
        Assert.Contains(awaited, errors);
        AssertHoldsExactly(errors, threadFailure, asyncFailure, syncAsyncFailure, classFailure);
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
        Assert.Equal(2, (await FaultsOf(run)).Count);
        Assert.True(survivorEnded);
    }

    [Theory(Timeout = 30000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Run_NestedParallelThrows_OuterRunHoldsEveryInnerExceptionDirectly(bool viaRunAsync)
    {
        // Awaiting the nested run would give only its first exception; every one must reach the
        // outer run, and none wrapped in another AggregateException.
        var innerThread = new InvalidOperationException("inner thread process");
        var innerAsync = new ArgumentException("inner async process");
        var outerFailure = new FormatException("outer process");
        var inner = new Parallel();
        inner.AddProcess(() => throw innerThread);
        inner.AddProcess(async _ =>
        {
            await Task.Yield();
            throw innerAsync;
        });
        inner.AddProcess(() => { });
        var outer = new Parallel();
        outer.AddProcess(inner);
        outer.AddProcess(() => throw outerFailure);

        ReadOnlyCollection<Exception> errors = viaRunAsync
            ? await FaultsOf(outer.RunAsync())
            : (await Assert.ThrowsAsync<AggregateException>(() => OnOwnThread(outer.Run))).InnerExceptions;

        AssertHoldsExactly(errors, innerThread, innerAsync, outerFailure);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ProcessTaskHoldsSeveralExceptions_CollectsEachOne()
    {
        // A process whose task holds several exceptions (here from Task.WhenAll) contributes all
        // of them, not only the first that awaiting it would rethrow.
        var first = new InvalidOperationException("first branch");
        var second = new ArgumentException("second branch");
        var parallel = new Parallel();
        parallel.AddProcess(_ => Task.WhenAll(Task.FromException(first), Task.FromException(second)));

        Assert.Equal([first, second], await FaultsOf(parallel.RunAsync()));
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ProcessReturnsNullTask_FailsWithInvalidOperationExceptionNamingTheProcess()
    {
        bool otherRan = false;
        var parallel = new Parallel();
        parallel.AddProcess(new NullTaskProcess());
        parallel.AddProcess(() => otherRan = true);

        var error = Assert.IsType<InvalidOperationException>(Assert.Single(await FaultsOf(parallel.RunAsync())));
        Assert.Contains(nameof(NullTaskProcess), error.Message, StringComparison.Ordinal);
        Assert.Contains("return a Task", error.Message, StringComparison.Ordinal);
        Assert.True(otherRan);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_DelegateReturnsNullTask_FailsWithInvalidOperationExceptionNamingTheDelegate()
    {
        var parallel = new Parallel();
        parallel.AddProcess(ReturnsNull);

        var error = Assert.IsType<InvalidOperationException>(Assert.Single(await FaultsOf(parallel.RunAsync())));
        Assert.Contains(nameof(ReturnsNull), error.Message, StringComparison.Ordinal);
        Assert.Contains("return a Task", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_TokenCancelledAndEveryErrorIsCancellation_TaskEndsCanceled()
    {
        using var cancellation = new CancellationTokenSource();
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var channel = new One2OneChannel<int>();
        var parallel = new Parallel();
        parallel.AddProcess(async cancellationToken =>
        {
            started.SetResult();
            await channel.ReadAsync(cancellationToken); // no writer: only cancellation ends it
        });
        parallel.AddProcess(async cancellationToken => await Task.Delay(Timeout.Infinite, cancellationToken));
        parallel.AddProcess(() => { });

        Task run = parallel.RunAsync(cancellation.Token);
        await started.Task;
        await cancellation.CancelAsync();

        OperationCanceledException error = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => run);
        Assert.True(run.IsCanceled);
        Assert.Equal(cancellation.Token, error.CancellationToken);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_TokenCancelledButAProcessFailedOtherwise_TaskFaultsWithEveryError()
    {
        using var cancellation = new CancellationTokenSource();
        var failure = new InvalidOperationException("not a cancellation");
        var parallel = new Parallel();
        parallel.AddProcess(async cancellationToken => await Task.Delay(Timeout.Infinite, cancellationToken));
        parallel.AddProcess(async cancellationToken =>
        {
            // Fails (with something else than a cancellation) once the token fires.
            await Task.Delay(Timeout.Infinite, cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            throw failure;
        });

        Task run = parallel.RunAsync(cancellation.Token);
        await cancellation.CancelAsync();

        ReadOnlyCollection<Exception> errors = await FaultsOf(run);
        Assert.Equal(2, errors.Count);
        Assert.Contains(failure, errors);
        Assert.Single(errors, e => e is OperationCanceledException);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ProcessThrowsCancellationWithoutTokenFiring_TaskFaults()
    {
        var parallel = new Parallel();
        parallel.AddProcess(_ => Task.FromCanceled(new CancellationToken(canceled: true)));

        Assert.IsAssignableFrom<OperationCanceledException>(Assert.Single(await FaultsOf(parallel.RunAsync(CancellationToken.None))));
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

    /// <summary>Asserts that <paramref name="errors"/> holds exactly the <paramref name="expected"/> exceptions, in any order.</summary>
    private static void AssertHoldsExactly(ReadOnlyCollection<Exception> errors, params Exception[] expected)
    {
        Assert.Equal(expected.Length, errors.Count);
        Assert.All(expected, exception => Assert.Contains(exception, errors));
    }

    /// <summary>Awaits a run that must fault; returns the exceptions its task holds.</summary>
    private static async Task<ReadOnlyCollection<Exception>> FaultsOf(Task run)
    {
        await Assert.ThrowsAnyAsync<Exception>(() => run);
        Assert.True(run.IsFaulted, $"The run ended {run.Status}.");
        return run.Exception!.InnerExceptions;
    }

    private static Task ReturnsNull(CancellationToken cancellationToken) => null!;

    private sealed class NullTaskProcess : IAsyncCSPProcess
    {
        public Task RunAsync(CancellationToken cancellationToken) => null!;
    }
}
