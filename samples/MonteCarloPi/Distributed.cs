using System.Diagnostics;
using CspNet.NameServer;
using CspNet.Remote;

/// <summary>
/// Table 4 of the CSP.NET paper, with <see cref="DistParallel"/>: the same workers as the thread
/// mode, shipped to worker pools that run as child programs on this machine, sending their counts
/// over a named Any2One channel to a collector in this program.
/// </summary>
/// <remarks>
/// The paper's distributed Monte Carlo Pi (listings 9 and 10) wrote a <c>DistControl</c> process to
/// a named channel that a waiting program read and ran: a worker pool by hand. DistParallel and
/// the pools now do that part, so what remains of the listings is the worker and the collector.
/// </remarks>
sealed class Distributed : IDisposable
{
    /// <summary>The named channel the workers' counts arrive on; it lives in this program (its reading end).</summary>
    const string CountsChannel = "montecarlopi/counts";

    private readonly NameServerHost nameServer;
    private readonly ChildPrograms pools;
    private readonly AltingChannelIn<long> counts;

    private Distributed(NameServerHost nameServer, ChildPrograms pools, AltingChannelIn<long> counts)
    {
        this.nameServer = nameServer;
        this.pools = pools;
        this.counts = counts;
    }

    /// <summary>Starts the NameServer here, <paramref name="poolCount"/> pool programs, and joins.</summary>
    public static async Task<Distributed> StartAsync(int poolCount, int workersPerPool)
    {
        NameServerHost nameServer = await NameServerHost.StartAsync(new NameServerHostOptions { Port = 0 });
        var pools = new ChildPrograms();
        try
        {
            Console.WriteLine($"NameServer at {nameServer.Uri}; starting {poolCount} worker pool programs of {workersPerPool} workers");
            await PoolPrograms.StartAsync(pools, nameServer.Uri, poolCount, workersPerPool);
            await CspManager.InitAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = "MonteCarloPi" });
            return new Distributed(nameServer, pools, await Factory.GetAny2OneInAsync<long>(CountsChannel));
        }
        catch
        {
            pools.Dispose();
            await nameServer.DisposeAsync();
            throw;
        }
    }

    /// <summary>Processes of the last run that ran on pools, and here.</summary>
    public (int Remote, int Local) LastPlacement { get; private set; }

    /// <summary>One run: the job split among <paramref name="processes"/> shipped workers; the time includes shipping them.</summary>
    public (PiEstimate, TimeSpan) Run(PiJob job, int processes)
    {
        var stopwatch = Stopwatch.StartNew();
        var workers = job.Split(processes).Select(work => (ICSPProcess)new DistWorker(work, CountsChannel)).ToArray();
        var distParallel = new DistParallel(workers);
        Task running = distParallel.RunAsync();
        long inside = 0;
        for (int i = 0; i < processes; i++)
        {
            inside += counts.Read();
        }

        running.GetAwaiter().GetResult();
        LastPlacement = (distParallel.RanRemotely, distParallel.RanLocally);
        return (job.Merge(inside), stopwatch.Elapsed);
    }

    public void Dispose()
    {
        CspManager.Shutdown();
        pools.Dispose();
        nameServer.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }
}

/// <summary>
/// Listing 8's worker, shipped: it holds only its <see cref="WorkItem"/> and the name of the
/// channel, and gets the named channel inside Run(), so it runs unchanged on any worker.
/// </summary>
[Serializable]
class DistWorker : ICSPProcess
{
    private readonly WorkItem work;
    private readonly string channel;

    public DistWorker(WorkItem work, string channel)
    {
        this.work = work;
        this.channel = channel;
    }

    public void Run() => Factory.GetAny2OneOut<long>(channel).Write(MonteCarlo.CountInside(work));
}
