using CspNet.Remote.Workers;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Testing;

namespace CspNet.Remote.Tests.Workers;

/// <summary>
/// Cancelling <see cref="DistParallel.RunAsync"/> mid-run: the processes on pools' workers and on
/// local threads are cancelled (token, then poison on what they got by name), the pool's worker is
/// free again, and no value crosses a named channel twice.
/// </summary>
public sealed class DistParallelCancellationTests
{
    private const int Timeout = 60_000;

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_CancelledWhileARemoteWriterBlocks_PoisonsItFreesTheWorkerAndNoValueTwice()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 1);
        CspNode client = await system.NodeAsync("client");
        string name = "cancel-results-" + Guid.NewGuid().ToString("N");
        AltingChannelIn<int> results = await client.GetAny2OneInAsync<int>(name);
        var writer = new EndlessWriter(name);
        var run = new DistParallel([writer], client) { Shipper = new FakeShipping() };
        using var cancel = new CancellationTokenSource();

        Task running = run.RunAsync(cancel.Token);
        var seen = new List<int>();
        for (int i = 0; i < 10_000; i++)
        {
            seen.Add(await results.ReadAsync());
        }

        // The writer now blocks in its next write: nobody reads until the run is cancelled.
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);
        await Assert.ThrowsAsync<PoisonException>(async () => await results.ReadAsync());

        Assert.Equal(Enumerable.Range(0, seen.Count), seen);
        Assert.IsType<PoisonException>(await writer.Ended.Task);
        Assert.Equal(1, pool.FreeWorkers);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_CancelledWhileARemoteProcessWaitsOnItsToken_ItEndsAndTheNextRunGetsTheWorker()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 1);
        CspNode client = await system.NodeAsync("client");
        var watcher = new TokenWatcher();
        var run = new DistParallel([watcher], client) { Shipper = new FakeShipping() };
        using var cancel = new CancellationTokenSource();

        Task running = run.RunAsync(cancel.Token);
        await watcher.Started.Task;
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);

        Assert.True(watcher.SawCancellation);
        Assert.Equal(pool.Node.ProgramLabel, watcher.RanOn);
        Assert.Equal(1, pool.FreeWorkers);

        // The worker serves the next run (wherever the NameServer's hint sends it, the run completes).
        var next = new DistParallel([new TokenWatcher { EndAtOnce = true }], client) { Shipper = new FakeShipping() };
        await next.RunAsync();
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_CancelledWhileRemoteAsyncProcessesAwait_TheirTokenAndPoisonEndThemAndTheWorkersAreFree()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 2);
        CspNode client = await system.NodeAsync("client");
        string name = "cancel-async-results-" + Guid.NewGuid().ToString("N");
        AltingChannelIn<int> results = await client.GetAny2OneInAsync<int>(name);
        var waiter = new AsyncTokenWaiter();
        var writer = new AsyncEndlessWriter(name);
        var run = new DistParallel([waiter, writer], client) { Shipper = new FakeShipping() };
        using var cancel = new CancellationTokenSource();

        Task running = run.RunAsync(cancel.Token);
        var seen = new List<int>();
        for (int i = 0; i < 10_000; i++)
        {
            seen.Add(await results.ReadAsync());
        }

        await waiter.Started.Task;
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);
        await Assert.ThrowsAsync<PoisonException>(async () => await results.ReadAsync());

        Assert.Equal(Enumerable.Range(0, seen.Count), seen);
        Assert.IsAssignableFrom<OperationCanceledException>(await waiter.Ended.Task);
        Assert.IsType<PoisonException>(await writer.Ended.Task);
        Assert.Equal(pool.Node.ProgramLabel, waiter.RanOn);
        Assert.Equal(2, pool.FreeWorkers);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_CancelledWhileALocalProcessBlocksOnANamedChannel_PoisonsItAndEndsCancelled()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        CspNode client = await system.NodeAsync("client");
        var reader = new StarvedReader("cancel-starved-" + Guid.NewGuid().ToString("N"));
        var watcher = new TokenWatcher();
        var run = new DistParallel([reader, watcher], client) { Shipper = new FakeShipping() };
        using var cancel = new CancellationTokenSource();

        Task running = run.RunAsync(cancel.Token);
        await reader.Reading.Task;
        await watcher.Started.Task;
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);

        Assert.IsType<PoisonException>(await reader.Ended.Task);
        Assert.True(watcher.SawCancellation);
        Assert.Equal("client", watcher.RanOn);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_CancelledWhileANestedParallelsProcessesBlockOnNamedChannels_PoisonsThemAndFreesTheWorker()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 1);
        CspNode client = await system.NodeAsync("client");
        var readers = new[]
        {
            new StarvedReader("cancel-nested-a-" + Guid.NewGuid().ToString("N")),
            new StarvedReader("cancel-nested-b-" + Guid.NewGuid().ToString("N")),
        };
        var nested = new NestedParallel(readers);
        var run = new DistParallel([nested], client) { Shipper = new FakeShipping() };
        using var cancel = new CancellationTokenSource();

        Task running = run.RunAsync(cancel.Token);
        await Task.WhenAll(readers.Select(r => r.Reading.Task));
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);

        foreach (StarvedReader reader in readers)
        {
            Assert.IsType<PoisonException>(await reader.Ended.Task);
        }

        Assert.Equal(1, pool.FreeWorkers);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_CancelledBeforeTheRemoteProcessStarts_ItNeverRunsAndTheWorkerIsFree()
    {
        var store = new FakeShipping.Store { HoldBeforeStart = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously) };
        var cancelledAtPool = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var logs = FakeLogCollector.Create(new FakeLogCollectorOptions
        {
            OutputSink = line =>
            {
                if (line.Contains("cancelled its jobs", StringComparison.Ordinal))
                {
                    cancelledAtPool.TrySetResult();
                }
            },
        });
        using var provider = new FakeLoggerProvider(logs);
        using ILoggerFactory loggers = LoggerFactory.Create(b => b.AddProvider(provider).SetMinimumLevel(LogLevel.Information));
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 1, store, o => o.LoggerFactory = loggers);
        CspNode client = await system.NodeAsync("client");
        var watcher = new TokenWatcher { EndAtOnce = true };
        var run = new DistParallel([watcher], client) { Shipper = new FakeShipping() };
        using var cancel = new CancellationTokenSource();

        Task running = run.RunAsync(cancel.Token);
        await store.Instantiating.Task;
        await cancel.CancelAsync();
        await cancelledAtPool.Task; // the pool has the Cancel while the job is still being loaded
        store.HoldBeforeStart.SetResult();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);

        Assert.False(watcher.Started.Task.IsCompleted);
        Assert.Equal(1, pool.FreeWorkers);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_CancelledProcessIgnoresCancellation_EndsAfterCancelTimeoutAndTheWorkerReturnsWhenItEnds()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 1);
        CspNode client = await system.NodeAsync("client");
        var blocker = new Blocker();
        var run = new DistParallel([blocker], client) { Shipper = new FakeShipping(), CancelTimeout = TimeSpan.FromMilliseconds(200) };
        using var cancel = new CancellationTokenSource();

        Task running = run.RunAsync(cancel.Token);
        await blocker.Started.Task;
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => running);

        // Still running (a thread cannot be stopped from outside): its worker is still taken.
        Assert.Equal(0, pool.FreeWorkers);
        blocker.Release.Set();
    }

    [Fact]
    public void CancelTimeout_ZeroOrLess_Throws()
    {
        var run = new DistParallel();

        Assert.Throws<ArgumentOutOfRangeException>(() => run.CancelTimeout = TimeSpan.Zero);
    }

    [Fact]
    public void ProcessCancellationToken_OutsideADistParallelProcess_IsNone()
    {
        Assert.Equal(CancellationToken.None, DistParallel.ProcessCancellationToken);
    }

    /// <summary>Writes 0, 1, 2, ... to a named Any2One until its write fails; <see cref="Ended"/> holds how.</summary>
    private sealed class EndlessWriter(string name) : ICSPProcess
    {
        public TaskCompletionSource<Exception> Ended { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Run()
        {
            AltingChannelOut<int> output = CspManager.Node.GetAny2OneOut<int>(name);
            try
            {
                for (int i = 0; ; i++)
                {
                    output.Write(i);
                }
            }
            catch (Exception e)
            {
                Ended.TrySetResult(e);
                throw;
            }
        }
    }

    /// <summary>Creates a named One2One and reads it; nobody writes.</summary>
    private sealed class StarvedReader(string name) : ICSPProcess
    {
        public TaskCompletionSource Reading { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource<Exception> Ended { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Run()
        {
            AltingChannelIn<int> input = CspManager.Node.GetOne2OneIn<int>(name);
            Reading.TrySetResult();
            try
            {
                input.Read();
            }
            catch (Exception e)
            {
                Ended.TrySetResult(e);
                throw;
            }
        }
    }

    /// <summary>Runs its processes in a <see cref="Parallel"/> of its own, on threads it starts itself.</summary>
    private sealed class NestedParallel(ICSPProcess[] processes) : ICSPProcess
    {
        public void Run() => new Parallel(processes).Run();
    }

    /// <summary>Awaits a delay that only its token ends.</summary>
    private sealed class AsyncTokenWaiter : IAsyncCSPProcess
    {
        public TaskCompletionSource Started { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource<Exception> Ended { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public string? RanOn { get; private set; }

        public async Task RunAsync(CancellationToken cancellationToken)
        {
            RanOn = CspManager.Node.ProgramLabel;
            Started.TrySetResult();
            try
            {
                await Task.Delay(System.Threading.Timeout.Infinite, cancellationToken);
            }
            catch (Exception e)
            {
                Ended.TrySetResult(e);
                throw;
            }
        }
    }

    /// <summary>Writes 0, 1, 2, ... with WriteAsync to a named Any2One until its write fails.</summary>
    private sealed class AsyncEndlessWriter(string name) : IAsyncCSPProcess
    {
        public TaskCompletionSource<Exception> Ended { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public async Task RunAsync(CancellationToken cancellationToken)
        {
            AltingChannelOut<int> output = await CspManager.Node.GetAny2OneOutAsync<int>(name, cancellationToken: cancellationToken);
            try
            {
                for (int i = 0; ; i++)
                {
                    // Not the token: a write the token cancels is exact too, but this one is ended by poison.
                    await output.WriteAsync(i, CancellationToken.None);
                }
            }
            catch (Exception e)
            {
                Ended.TrySetResult(e);
                throw;
            }
        }
    }

    /// <summary>Waits on <see cref="DistParallel.ProcessCancellationToken"/> (or ends at once), recording where it ran.</summary>
    private sealed class TokenWatcher : ICSPProcess
    {
        public bool EndAtOnce { get; init; }

        public TaskCompletionSource Started { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public bool SawCancellation { get; private set; }

        public string? RanOn { get; private set; }

        public void Run()
        {
            RanOn = CspManager.Node.ProgramLabel;
            Started.TrySetResult();
            if (!EndAtOnce)
            {
                DistParallel.ProcessCancellationToken.WaitHandle.WaitOne();
                SawCancellation = DistParallel.ProcessCancellationToken.IsCancellationRequested;
            }
        }
    }
}
