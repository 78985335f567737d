using CspNet.Remote.TestJobs;
using CspNet.Remote.Workers;

namespace CspNet.Remote.Tests.Workers;

/// <summary>DistParallel against worker pools hosted in this process (shipping faked: see <see cref="FakeShipping"/>).</summary>
public sealed class DistParallelTests
{
    private const int Timeout = 30_000;

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_NotInitialized_RunsEveryProcessLocally()
    {
        var processes = new[] { new Counter(), new Counter(), new Counter() };
        var run = new DistParallel(processes);

        await run.RunAsync();

        Assert.All(processes, p => Assert.Equal(1, p.Runs));
        Assert.Equal(3, run.RanLocally);
        Assert.Equal(0, run.RanRemotely);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_StandAloneNode_RunsLocallyWithoutShipping()
    {
        await using CspNode node = CspNode.CreateStandAlone();
        var shipping = new FakeShipping();
        var run = new DistParallel([new Counter(), new Counter()], node) { Shipper = shipping };

        await run.RunAsync();

        Assert.Equal(2, run.RanLocally);
        Assert.Equal(0, shipping.ImagesSent);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_NoPoolRegistered_RunsLocallyOnTheCallersNode()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        CspNode client = await system.NodeAsync("client");
        var process = new WhereAmI();
        var run = new DistParallel([process], client) { Shipper = new FakeShipping() };

        await run.RunAsync();

        Assert.Equal(1, run.RanLocally);
        Assert.Equal("client", WhereAmI.Seen[process.Id]);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_TwoPoolsWithFreeWorkers_RunsEveryProcessRemotelyOnThePoolsNodes()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost first = await system.PoolAsync("first", 2);
        WorkerPoolHost second = await system.PoolAsync("second", 2);
        CspNode client = await system.NodeAsync("client");
        WhereAmI[] processes = [new(), new(), new(), new()];
        var shipping = new FakeShipping();
        var run = new DistParallel(processes, client) { Shipper = shipping };

        await run.RunAsync();

        Assert.Equal(4, run.RanRemotely);
        Assert.Equal(2, processes.Count(p => WhereAmI.Seen[p.Id] == first.Node.ProgramLabel));
        Assert.Equal(2, processes.Count(p => WhereAmI.Seen[p.Id] == second.Node.ProgramLabel));
        Assert.Equal(2, shipping.ImagesSent); // once per pool: the second job of a pool finds the image cached
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_MoreProcessesThanFreeWorkers_RunsTheRestLocally()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await system.PoolAsync("small", 1);
        CspNode client = await system.NodeAsync("client");
        WhereAmI[] processes = [new(), new(), new()];
        var run = new DistParallel(processes, client) { Shipper = new FakeShipping() };

        await run.RunAsync();

        Assert.Equal(1, run.RanRemotely);
        Assert.Equal(2, run.RanLocally);
        Assert.Equal(2, processes.Count(p => WhereAmI.Seen[p.Id] == "client"));
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_Listing6OnTwoPools_ReaderGetsEverySumOverNamedChannels()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await system.PoolAsync("first", 1);
        await system.PoolAsync("second", 2);
        CspNode client = await system.NodeAsync("client");
        AltingChannelIn<int> result = await client.GetOne2OneInAsync<int>("result");
        var run = new DistParallel([new AltReader(10, "result"), new AddIntegers(100, 10, "plus"), new AddIntegers(50, 10, "minus")], client) { Shipper = new FakeShipping() };

        Task running = run.RunAsync();
        int total = await result.ReadAsync();
        await running;

        Assert.Equal(3, run.RanRemotely);
        Assert.Equal(10 * (4950 - 1225), total);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_AsyncProcessesOnAPool_RunRemotelyAndWriteEveryValue()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 2);
        CspNode client = await system.NodeAsync("client");
        string name = "async-sums-" + Guid.NewGuid().ToString("N");
        AltingChannelIn<int> sums = await client.GetAny2OneInAsync<int>(name);
        var run = new DistParallel([new AsyncCounter(name, 100), new AsyncCounter(name, 50)], client) { Shipper = new FakeShipping() };

        Task running = run.RunAsync();
        int total = 0;
        for (int i = 0; i < 150; i++)
        {
            total += await sums.ReadAsync();
        }

        await running;

        Assert.Equal(2, run.RanRemotely);
        Assert.Equal(4950 + 1225, total);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_TamperedImage_ProcessRefusedWithHashMismatchAndNotRun()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 1);
        CspNode client = await system.NodeAsync("client");
        var process = new Counter();
        var run = new DistParallel([process], client) { Shipper = new FakeShipping { Tamper = true } };

        var e = await Assert.ThrowsAsync<AggregateException>(() => run.RunAsync());

        ProcessRefusedException refused = Assert.IsType<ProcessRefusedException>(Assert.Single(e.InnerExceptions));
        Assert.Equal("HashMismatch", refused.Reason);
        Assert.Contains("SHA-256", refused.Message, StringComparison.Ordinal);
        Assert.Equal(0, process.Runs);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_PoolStopsWhileAProcessRuns_FailsWithWorkerLostInsteadOfHanging()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("doomed", 1);
        CspNode client = await system.NodeAsync("client");
        var blocker = new Blocker();
        var run = new DistParallel([blocker], client) { Shipper = new FakeShipping() };

        Task running = run.RunAsync();
        await blocker.Started.Task;
        await pool.DisposeAsync();
        var e = await Assert.ThrowsAsync<AggregateException>(() => running);
        blocker.Release.Set();

        WorkerLostException lost = Assert.IsType<WorkerLostException>(Assert.Single(e.InnerExceptions));
        Assert.Equal(typeof(Blocker).FullName, lost.ProcessType);
        Assert.Contains("doomed", lost.Pool, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_PoolStopsBeforeTheProcessStarts_RerunsItLocally()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        var store = new FakeShipping.Store { HoldBeforeStart = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously) };
        WorkerPoolHost pool = await system.PoolAsync("doomed", 1, store);
        CspNode client = await system.NodeAsync("client");
        var process = new WhereAmI();
        var run = new DistParallel([process], client) { Shipper = new FakeShipping() };

        Task running = run.RunAsync();
        await store.Instantiating.Task;
        await pool.DisposeAsync();
        await running;
        store.HoldBeforeStart.SetResult();

        Assert.Equal(1, run.RanLocally);
        Assert.Equal("client", WhereAmI.Seen[process.Id]);
    }

    [Theory(Timeout = Timeout)]
    [InlineData(null)]
    [InlineData("wrong")]
    public async Task RunAsync_PoolWithTokenAndCallerWithoutTheRightOne_IsRefusedAndNothingRuns(string? token)
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await system.PoolAsync("guarded", 1, configure: o => o.Token = "secret");
        CspNode client = await system.NodeAsync("client", o => o.WorkerPoolToken = token);
        var process = new Counter();
        var run = new DistParallel([process], client) { Shipper = new FakeShipping() };

        var e = await Assert.ThrowsAsync<UnauthorizedAccessException>(() => run.RunAsync());

        Assert.Contains("guarded", e.Message, StringComparison.Ordinal);
        Assert.Equal(0, process.Runs);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_PoolWithTokenAndCallerWithIt_RunsRemotely()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await system.PoolAsync("guarded", 1, configure: o => o.Token = "secret");
        CspNode client = await system.NodeAsync("client", o => o.WorkerPoolToken = "secret");
        var run = new DistParallel([new Counter()], client) { Shipper = new FakeShipping() };

        await run.RunAsync();

        Assert.Equal(1, run.RanRemotely);
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_LocalProcessThrows_AggregateExceptionHoldsIt()
    {
        var run = new DistParallel(new Thrower(), new Counter());

        var e = await Assert.ThrowsAsync<AggregateException>(() => run.RunAsync());

        Assert.IsType<InvalidOperationException>(Assert.Single(e.InnerExceptions));
    }

    [Fact]
    public void Constructor_NullProcess_ThrowsNamingIt()
    {
        var e = Assert.Throws<ArgumentException>(() => new DistParallel(new Counter(), null!));

        Assert.Contains("processes[1]", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Options_NonLoopbackWithoutAuthentication_RefusesToStart()
    {
        var options = new WorkerPoolOptions { Address = "10.1.2.3" };

        var e = Assert.Throws<ArgumentException>(options.Validate);

        Assert.Contains("Token", e.Message, StringComparison.Ordinal);
    }

    /// <summary>Writes 0..count-1 with WriteAsync to a named Any2One.</summary>
    private sealed class AsyncCounter(string name, int count) : IAsyncCSPProcess
    {
        public async Task RunAsync(CancellationToken cancellationToken)
        {
            AltingChannelOut<int> output = await CspManager.Node.GetAny2OneOutAsync<int>(name, cancellationToken: cancellationToken);
            for (int i = 0; i < count; i++)
            {
                await output.WriteAsync(i, cancellationToken);
            }
        }
    }

    private sealed class Counter : ICSPProcess
    {
        private int _runs;

        public int Runs => _runs;

        public void Run() => Interlocked.Increment(ref _runs);
    }
}
