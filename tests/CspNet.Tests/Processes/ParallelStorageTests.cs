using static CspNet.Tests.Processes.ProcessTestHelpers;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Processes;

/// <summary>
/// <see cref="Parallel"/> keeps up to two processes (and their tasks) in fields and moves them into
/// an array at the third; every process of a run, however nested, reports its end to the run.
/// These tests cross that boundary in every way: adds, constructors, failures in each slot, reruns.
/// </summary>
public class ParallelStorageTests
{
    [Theory(Timeout = 30000)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(5)]
    public async Task RunAsync_EveryProcessFails_EveryExceptionReportedOnceInEachRun(int count)
    {
        var parallel = new Parallel();
        var failures = new Exception[count];
        for (int i = 0; i < count; i++)
        {
            var failure = new InvalidOperationException($"process {i}");
            failures[i] = failure;
            parallel.AddProcess(async _ =>
            {
                await Task.Yield();
                throw failure;
            });
        }

        Assert.Equal(count, parallel.Count);
        for (int run = 0; run < 2; run++)
        {
            Task task = parallel.RunAsync();
            await Assert.ThrowsAnyAsync<InvalidOperationException>(() => task);

            // The tasks of the first run were let go: the second reports its own failures only.
            Assert.Equal(failures.OrderBy(e => e.Message), task.Exception!.InnerExceptions.OrderBy(e => e.Message));
        }
    }

    [Theory(Timeout = 30000)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(4)]
    public async Task Constructor_AsyncProcesses_AllRunInEachOfTwoRuns(int count)
    {
        int runs = 0;
        var processes = new IAsyncCSPProcess[count];
        for (int i = 0; i < count; i++)
        {
            processes[i] = new AsyncActionProcess(async _ =>
            {
                await Task.Yield();
                Interlocked.Increment(ref runs);
            });
        }

        var parallel = new Parallel(processes);
        await parallel.RunAsync();
        await parallel.RunAsync();

        Assert.Equal(2 * count, runs);
    }

    [Fact(Timeout = 30000)]
    public async Task AddProcess_ThreadAndAsyncInFieldsThenAThird_AllRunAndCommunicate()
    {
        var first = new One2OneChannel<int>();
        var second = new One2OneChannel<int>();
        int received = 0;
        var parallel = new Parallel();
        parallel.AddProcess(() => first.Write(1));
        parallel.AddProcess(async ct => await second.WriteAsync(await first.ReadAsync(ct) + 1, ct));
        Assert.Equal(2, parallel.Count);
        parallel.AddProcess(async ct => received = await second.ReadAsync(ct));
        Assert.Equal(3, parallel.Count);

        await parallel.RunAsync().WaitAsync(WaitLimit);

        Assert.Equal(2, received);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_NestedParallelsFail_RootReportsAllAndNestedOnesRunAloneAfterwards()
    {
        var inner = new Parallel();
        inner.AddProcess(async _ =>
        {
            await Task.Yield();
            throw new InvalidOperationException("inner");
        });
        var middle = new Parallel();
        middle.AddProcess(inner);
        middle.AddProcess(async _ =>
        {
            await Task.Yield();
            throw new ArgumentException("middle");
        });
        var outer = new Parallel();
        outer.AddProcess(middle);
        outer.AddProcess(() => throw new FormatException("outer"));

        Task run = outer.RunAsync();
        await Assert.ThrowsAnyAsync<Exception>(() => run.WaitAsync(WaitLimit));
        Assert.Equal(
            ["inner", "middle", "outer"],
            run.Exception!.InnerExceptions.Select(e => e.Message).Order());

        // Finished with the run: each nested parallel runs again on its own.
        Task innerAlone = inner.RunAsync();
        await Assert.ThrowsAsync<InvalidOperationException>(() => innerAlone.WaitAsync(WaitLimit));
        Task middleAlone = middle.RunAsync();
        await Assert.ThrowsAnyAsync<Exception>(() => middleAlone.WaitAsync(WaitLimit));
        Assert.Equal(2, middleAlone.Exception!.InnerExceptions.Count);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ParallelOfManyNestedPairs_EveryLeafRunsOnce()
    {
        // The shape of JVMCSP's program: a par for of pars of pars of two processes.
        const int Iterations = 200;
        int leaves = 0;
        var main = new Parallel();
        for (int i = 0; i < Iterations; i++)
        {
            var iteration = new Parallel();
            for (int side = 0; side < 2; side++)
            {
                iteration.AddProcess(new Parallel(
                    new AsyncActionProcess(async _ => { await Task.Yield(); Interlocked.Increment(ref leaves); }),
                    new AsyncActionProcess(_ => { Interlocked.Increment(ref leaves); return Task.CompletedTask; })));
            }

            main.AddProcess(iteration);
        }

        await main.RunAsync().WaitAsync(WaitLimit);

        Assert.Equal(4 * Iterations, leaves);
    }
}
