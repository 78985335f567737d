using System.IO;
using CspNet.Remote.Collectives;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Collectives;

/// <summary>
/// Scatter over a named One2Any and gather over a named Any2One, with workers in other programs:
/// nodes in this test process, and a separate child program for a killed worker.
/// </summary>
public sealed class ScatterGatherTests
{
    private const int Timeout = 60_000;

    [Fact(Timeout = Timeout)]
    public async Task ScatterGather_TenThousandValuesThroughThreeWorkerPrograms_EachResultGatheredOnceInOrder()
    {
        const int Count = 10_000;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode farmer = await system.NodeAsync("farmer");
        ScatterWriter<int> scatter = await NamedScatter.CreateAsync<int>(farmer, "work");
        GatherReader<long> gather = await NamedGather.CreateAsync<long>(farmer, "results");
        var workers = new List<Task<int>>();
        for (int w = 0; w < 3; w++)
        {
            workers.Add(WorkUntilPoisonedAsync(await system.NodeAsync("worker-" + w)));
        }

        Task<long[]> gathering = gather.GatherAsync(0, Count).AsTask();
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(i, await scatter.WriteAsync(i));
        }

        long[] results = await gathering;
        Assert.Equal(Enumerable.Range(0, Count).Select(i => 2L * i), results);
        scatter.Poison();
        Assert.Equal(Count, (await Task.WhenAll(workers)).Sum());
    }

    [Fact(Timeout = Timeout)]
    public async Task Scatter_WorkerProgramKilledWhileWaitingForWork_NoValueIsLost()
    {
        const int Count = 10_000;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode farmer = await system.NodeAsync("farmer");
        ScatterWriter<int> scatter = await NamedScatter.CreateAsync<int>(farmer, "jobs");
        GatherReader<long> gather = await NamedGather.CreateAsync<long>(farmer, "answers");
        ChildNode doomed = system.Child("scatter-once", "jobs", "answers");
        await doomed.ReadyAsync();
        Assert.Equal(0, await scatter.WriteAsync(0));
        Assert.Equal(new Indexed<long>(0, 0), await gather.ReadAsync());
        await doomed.WaitForAsync("worked 1");
        await doomed.KillAsync();

        Task<int> worker = WorkUntilPoisonedAsync(await system.NodeAsync("survivor"), "jobs", "answers");
        Task<long[]> gathering = gather.GatherAsync(1, Count).AsTask();
        for (int i = 1; i <= Count; i++)
        {
            await scatter.WriteAsync(i);
        }

        Assert.Equal(Enumerable.Range(1, Count).Select(i => 2L * i), await gathering);
        scatter.Poison();
        Assert.Equal(Count, await worker);
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_CancelledWithNoWorkerReading_ReachesNoWorkerAndUsesNoIndex()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ScatterWriter<int> scatter = await NamedScatter.CreateAsync<int>(await system.NodeAsync("farmer"), "idle");
        AltingChannelIn<Indexed<int>> work = await NamedScatter.JoinAsync<int>(await system.NodeAsync("worker"), "idle");

        using var cancel = new CancellationTokenSource();
        Task<long> write = scatter.WriteAsync(1, cancel.Token).AsTask();
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write);
        Task<long> next = scatter.WriteAsync(2).AsTask();
        Assert.Equal(new Indexed<int>(0, 2), await work.ReadAsync());
        Assert.Equal(0, await next);
    }

    [Fact(Timeout = Timeout)]
    public async Task GatherAsync_Cancelled_KeepsTheResultsReadForTheNextCall()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        GatherReader<string> gather = await NamedGather.CreateAsync<string>(await system.NodeAsync("gatherer"), "parts");
        AltingChannelOut<Indexed<string>> worker = await NamedGather.JoinAsync<string>(await system.NodeAsync("worker"), "parts");

        using var cancel = new CancellationTokenSource();
        Task<string[]> first = gather.GatherAsync(0, 3, cancel.Token).AsTask();
        await worker.WriteAsync(new Indexed<string>(2, "c"));
        await worker.WriteAsync(new Indexed<string>(0, "a"));
        await worker.WriteAsync(new Indexed<string>(7, "later"));
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => first);

        Task<string[]> again = gather.GatherAsync(0, 3).AsTask();
        await worker.WriteAsync(new Indexed<string>(1, "b"));
        Assert.Equal(["a", "b", "c"], await again);
        Assert.Equal(new Indexed<string>(7, "later"), await gather.ReadAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task GatherAsync_TwoResultsForOneIndex_ThrowsInvalidData()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        GatherReader<int> gather = await NamedGather.CreateAsync<int>(await system.NodeAsync("gatherer"), "twice");
        AltingChannelOut<Indexed<int>> worker = await NamedGather.JoinAsync<int>(await system.NodeAsync("worker"), "twice");

        Task<int[]> gathering = gather.GatherAsync(0, 2).AsTask();
        await worker.WriteAsync(new Indexed<int>(1, 10));
        await worker.WriteAsync(new Indexed<int>(1, 11));
        InvalidDataException error = await Assert.ThrowsAsync<InvalidDataException>(() => gathering);
        Assert.Contains("'twice'", error.Message, StringComparison.Ordinal);
        Assert.Contains("index 1", error.Message, StringComparison.Ordinal);
    }

    // A worker: doubles each value of the scatter into the gather until the scatter is poisoned; returns how many it did.
    private static async Task<int> WorkUntilPoisonedAsync(CspNode node, string scatter = "work", string gather = "results")
    {
        AltingChannelIn<Indexed<int>> work = await NamedScatter.JoinAsync<int>(node, scatter);
        AltingChannelOut<Indexed<long>> results = await NamedGather.JoinAsync<long>(node, gather);
        int done = 0;
        try
        {
            while (true)
            {
                Indexed<int> piece = await work.ReadAsync();
                await results.WriteAsync(new Indexed<long>(piece.Index, 2L * piece.Value));
                done++;
            }
        }
        catch (PoisonException)
        {
            return done;
        }
    }
}
