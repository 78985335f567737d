using CspNet.Remote.TestJobs;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Workers;

/// <summary>
/// DistParallel against WorkerPoolService programs (WorkerPoolService/) started from their build
/// output, with real shipping: the processes come from CspNet.Remote.TestJobs, which this test
/// project references and the worker program does not, so a process that runs there proves that
/// its code travelled. Children are killed when a test ends, whatever happened.
/// </summary>
public sealed class WorkerPoolProgramTests
{
    private const int Timeout = 60_000;

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_TwoPoolPrograms_RunsCodeTheyNeverHadInThoseProgramsAndListing6Works()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using ChildNode first = await StartPoolAsync(system, "first", workers: 1);
        await using ChildNode second = await StartPoolAsync(system, "second", workers: 2);
        CspNode client = await system.NodeAsync("client");
        AltingChannelIn<int> result = await client.GetOne2OneInAsync<int>("result");
        var run = new DistParallel(
            [new CspNet.Remote.TestJobs.AltReader(10, "result"), new CspNet.Remote.TestJobs.AddIntegers(100, 10, "plus"), new CspNet.Remote.TestJobs.AddIntegers(50, 10, "minus")],
            client);

        Task running = run.RunAsync();
        int total = await result.ReadAsync();
        await running;

        Assert.Equal(10 * (4950 - 1225), total);
        Assert.Equal(3, run.RanRemotely);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_ThreeProcessesOnPoolsOfOneAndTwoWorkers_RunAtOnceOnBothPrograms()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using ChildNode first = await StartPoolAsync(system, "first", workers: 1);
        await using ChildNode second = await StartPoolAsync(system, "second", workers: 2);
        CspNode client = await system.NodeAsync("client");
        AltingChannelIn<int> ids = await client.GetAny2OneInAsync<int>("pids");
        AltingChannelOut<bool> release = await client.GetOne2AnyOutAsync<bool>("release");
        var run = new DistParallel(
            [new ReportProcessIdThenWait("pids", "release"), new ReportProcessIdThenWait("pids", "release"), new ReportProcessIdThenWait("pids", "release")],
            client);

        Task running = run.RunAsync();
        // No process is released before all three have reported, so the three ran at the same
        // time, which three workers can do only across both programs (listing 6's placement).
        var seen = new List<int> { await ids.ReadAsync(), await ids.ReadAsync(), await ids.ReadAsync() };
        for (int i = 0; i < 3; i++)
        {
            await release.WriteAsync(true);
        }

        await running;

        Assert.Equal(3, run.RanRemotely);
        Assert.Equal(1, seen.Count(id => id == first.Id));
        Assert.Equal(2, seen.Count(id => id == second.Id));
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_PoolProgram_ProcessesRunInThePoolsOperatingSystemProcess()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using ChildNode pool = await StartPoolAsync(system, "pool", workers: 2);
        CspNode client = await system.NodeAsync("client");
        AltingChannelIn<int> ids = await client.GetAny2OneInAsync<int>("pids");
        var run = new DistParallel([new ReportProcessId("pids"), new ReportProcessId("pids")], client);

        Task running = run.RunAsync();
        int a = await ids.ReadAsync();
        int b = await ids.ReadAsync();
        await running;

        Assert.Equal(2, run.RanRemotely);
        Assert.Equal(pool.Id, a);
        Assert.Equal(pool.Id, b);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_RemoteProcessThrows_ExceptionReachesTheCallerWithTypeMessageAndStack()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using ChildNode pool = await StartPoolAsync(system, "pool", workers: 1);
        CspNode client = await system.NodeAsync("client");
        var run = new DistParallel([new FailingJob("boom")], client);

        var e = await Assert.ThrowsAsync<AggregateException>(() => run.RunAsync());

        RemoteProcessException remote = Assert.IsType<RemoteProcessException>(Assert.Single(e.InnerExceptions));
        Assert.Equal(typeof(InvalidOperationException).FullName, remote.RemoteTypeName);
        Assert.Equal("outer: boom", remote.Message);
        Assert.Contains(nameof(FailingJob), remote.RemoteStackTrace, StringComparison.Ordinal);
        RemoteProcessException inner = Assert.IsType<RemoteProcessException>(remote.InnerException);
        Assert.Equal(typeof(ArgumentException).FullName, inner.RemoteTypeName);
        Assert.Equal("inner: boom", inner.Message);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_PoolProgramKilledMidProcess_FailsWithWorkerLostAndDoesNotHang()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        ChildNode pool = await StartPoolAsync(system, "doomed", workers: 1);
        await using (pool)
        {
            CspNode client = await system.NodeAsync("client");
            AltingChannelIn<int> started = await client.GetOne2OneInAsync<int>("started");
            var run = new DistParallel([new StartThenHang("started")], client);

            Task running = run.RunAsync();
            Assert.Equal(pool.Id, await started.ReadAsync());
            await pool.KillAsync();
            var e = await Assert.ThrowsAsync<AggregateException>(() => running);

            WorkerLostException lost = Assert.IsType<WorkerLostException>(Assert.Single(e.InnerExceptions));
            Assert.Equal(typeof(StartThenHang).FullName, lost.ProcessType);
        }
    }

    [Theory(Timeout = Timeout)]
    [InlineData(null)]
    [InlineData("wrong-token")]
    public async Task DistParallel_PoolProgramWithTokenAndCallerWithoutIt_RefusedWithALogLine(string? token)
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        // The token from a file: the program refuses secrets on its command line.
        string tokenFile = Path.Combine(Path.GetTempPath(), "cspnet-token-" + Guid.NewGuid().ToString("N")[..8]);
        await File.WriteAllTextAsync(tokenFile, "right-token\n");
        try
        {
            await RunGuardedAsync(system, token, tokenFile);
        }
        finally
        {
            File.Delete(tokenFile);
        }
    }

    private static async Task RunGuardedAsync(PoolSystem system, string? token, string tokenFile)
    {
        await using ChildNode pool = await StartPoolAsync(system, "guarded", workers: 1, "--token-file", tokenFile);
        CspNode client = await system.NodeAsync("client", o => o.WorkerPoolToken = token);
        var run = new DistParallel([new FailingJob("must not run")], client);

        var e = await Assert.ThrowsAsync<UnauthorizedAccessException>(() => run.RunAsync());

        Assert.Contains("guarded", e.Message, StringComparison.Ordinal);
        await pool.WaitForTextAsync(token is null ? "no token" : "wrong token");
    }

    [Fact(Timeout = Timeout)]
    public async Task Program_NonLoopbackAddressWithoutToken_RefusesToStart()
    {
        await using ChildNode pool = ChildNode.StartProgram("WorkerPoolService", "cspnet-workerpool", "--address", "0.0.0.0", "--advertised-host", "example.invalid", "--port", "0");

        await pool.WaitForTextAsync("lets anyone who reaches it run code here");
        Assert.Equal(2, await pool.ExitAsync());
    }

    private static async Task<ChildNode> StartPoolAsync(PoolSystem system, string name, int workers, params string[] more)
    {
        ChildNode pool = ChildNode.StartProgram(
            "WorkerPoolService",
            "cspnet-workerpool",
            ["--port", "0", "--nameserver", system.Host.Uri.ToString(), "--workers", workers.ToString(System.Globalization.CultureInfo.InvariantCulture), "--name", name, "--WorkerPool:PeerTimeout", "00:00:02", .. more]);
        try
        {
            // Logged once the pool is registered at the NameServer: from then on DistParallel finds it.
            await pool.WaitForTextAsync($"Worker pool '{name}' listening at");
            return pool;
        }
        catch
        {
            await pool.DisposeAsync();
            throw;
        }
    }
}
