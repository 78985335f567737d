using static CspNet.Tests.Processes.ProcessTestHelpers;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Processes;

/// <summary>
/// A run starts its whole tree with one walk, depth first, one step (a thread-pool work item) per
/// async process, each step queuing the next before it runs its process; its end walks the tree
/// again with the walk's array, not recursion. These tests cover the shapes that walk must get through: deep nesting, cycles, thread
/// processes met on the way, a process that holds its thread, and a run started from inside one.
/// </summary>
public class ParallelWalkTests
{
    [Fact(Timeout = 60000)]
    public async Task RunAsync_NestingDeeperThanAThreadStack_RunsEveryLeafInEachOfTwoRuns()
    {
        const int Depth = 100_000;
        int runs = 0;
        var root = new Parallel();
        Parallel at = root;
        for (int i = 0; i < Depth; i++)
        {
            var nested = new Parallel();
            at.AddProcess(_ =>
            {
                Interlocked.Increment(ref runs);
                return Task.CompletedTask;
            });
            at.AddProcess(nested);
            at = nested;
        }

        await root.RunAsync();
        await root.RunAsync();

        Assert.Equal(2 * Depth, runs);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ParallelNestedInItself_FailsWithInvalidOperationExceptionAndEnds()
    {
        int runs = 0;
        var outer = new Parallel();
        var inner = new Parallel();
        inner.AddProcess(_ =>
        {
            Interlocked.Increment(ref runs);
            return Task.CompletedTask;
        });
        inner.AddProcess(outer);
        outer.AddProcess(inner);

        for (int run = 1; run <= 2; run++)
        {
            Task task = outer.RunAsync();
            await Assert.ThrowsAsync<InvalidOperationException>(() => task);

            Assert.IsType<InvalidOperationException>(Assert.Single(task.Exception!.InnerExceptions));
            Assert.Equal(run, runs);
        }
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ThreadProcessesDeepInTheTreeAfterAsyncOnes_AllStartAndCommunicate()
    {
        // Each async process of the first nested parallels waits for a thread process that the
        // walk reaches only after it: the walk must start it without waiting for them.
        const int Pairs = 20;
        int received = 0;
        var root = new Parallel();
        var channels = new One2OneChannel<int>[Pairs];
        for (int i = 0; i < Pairs; i++)
        {
            channels[i] = new One2OneChannel<int>();
            One2OneChannel<int> channel = channels[i];
            root.AddProcess(new Parallel(new AsyncActionProcess(async ct => Interlocked.Add(ref received, await channel.ReadAsync(ct)))));
        }

        for (int i = 0; i < Pairs; i++)
        {
            One2OneChannel<int> channel = channels[i];
            var writer = new Parallel();
            writer.AddProcess(new Parallel(new ActionProcess(() => channel.Write(1))));
            root.AddProcess(writer);
        }

        await root.RunAsync();

        Assert.Equal(Pairs, received);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_FirstLeafHoldsItsThreadUntilTheLastStarts_WalkMovesOnWithoutIt()
    {
        // The first process blocks its pool thread (which an async process should not do) until
        // the last one, many nested parallels later, has started: the step waiting behind it on
        // that thread must go to another one.
        const int Parallels = 50;
        using var lastStarted = new ManualResetEventSlim();
        bool sawLast = false;
        var root = new Parallel();
        root.AddProcess(new Parallel(new AsyncActionProcess(_ =>
        {
            sawLast = lastStarted.Wait(WaitLimit, CancellationToken.None);
            return Task.CompletedTask;
        })));
        for (int i = 1; i < Parallels - 1; i++)
        {
            root.AddProcess(new Parallel(new AsyncActionProcess(_ => Task.CompletedTask), new AsyncActionProcess(_ => Task.CompletedTask)));
        }

        root.AddProcess(new Parallel(new AsyncActionProcess(_ =>
        {
            lastStarted.Set();
            return Task.CompletedTask;
        })));

        await root.RunAsync();

        Assert.True(sawLast);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_CalledFromAnAsyncProcess_NestedRunStartsEveryProcessAndEnds()
    {
        const int Inner = 10;
        int runs = 0;
        var inner = new Parallel();
        for (int i = 0; i < Inner; i++)
        {
            inner.AddProcess(async _ =>
            {
                await Task.Yield();
                Interlocked.Increment(ref runs);
            });
        }

        var outer = new Parallel();
        outer.AddProcess(async ct =>
        {
            await inner.RunAsync(ct);
            await inner.RunAsync(ct);
        });

        await outer.RunAsync();

        Assert.Equal(2 * Inner, runs);
    }
}
