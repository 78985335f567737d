/// <summary>
/// Listing 8 of the CSP.NET paper: a thread process that throws its share of the points with its
/// own random generator. If given a barrier it waits there first, so that all workers start
/// together. Unlike the paper's worker, which kept its count in a field for Main to read after
/// <c>Parallel.Run</c>, it sends the count on a channel: then it needs nothing but its
/// <see cref="WorkItem"/> and a channel end, and would run unchanged on another machine.
/// </summary>
class Worker : ICSPProcess
{
    private readonly WorkItem work;
    private readonly IChannelOut<long> results;
    private readonly Barrier? start;

    public Worker(WorkItem work, IChannelOut<long> results, Barrier? start = null)
    {
        this.work = work;
        this.results = results;
        this.start = start;
    }

    public void Run()
    {
        start?.Sync();
        results.Write(MonteCarlo.CountInside(work));
    }
}

/// <summary>
/// The same worker as an async process. It just computes: <see cref="Parallel"/> starts async
/// processes on the .NET thread pool, so the workers run side by side on its threads and hold
/// none while they wait at the barrier or on the channel.
/// </summary>
class AsyncWorker : IAsyncCSPProcess
{
    private readonly WorkItem work;
    private readonly IChannelOut<long> results;
    private readonly Barrier? start;

    public AsyncWorker(WorkItem work, IChannelOut<long> results, Barrier? start = null)
    {
        this.work = work;
        this.results = results;
        this.start = start;
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        if (start is not null)
        {
            await start.SyncAsync(cancellationToken);
        }

        await results.WriteAsync(MonteCarlo.CountInside(work), cancellationToken);
    }
}

/// <summary>
/// Reads one count from each worker and adds them up. <see cref="Run"/> makes it a thread
/// process; <see cref="RunAsync"/> the same as an async process (<c>par.AddProcess(collector.RunAsync)</c>).
/// </summary>
class Collector : ICSPProcess
{
    private readonly IChannelIn<long> results;
    private readonly int workers;

    public Collector(IChannelIn<long> results, int workers)
    {
        this.results = results;
        this.workers = workers;
    }

    public long Inside { get; private set; }

    public void Run()
    {
        for (int i = 0; i < workers; i++)
        {
            Inside += results.Read();
        }
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        for (int i = 0; i < workers; i++)
        {
            Inside += await results.ReadAsync(cancellationToken);
        }
    }
}
