// The worker pool of the CSP.NET paper (listings 1-3), with local channels:
//
//   Client --jobs (Any2One)--> WorkerPool --chan (One2Any)--> Worker 1..3
//
// The client submits jobs, then poisons the jobs channel; the pool passes the poison on to the
// workers' channel; every process ends, so Parallel.Run returns.
using System.Diagnostics;

class Program
{
    static void Main()
    {
        var stopwatch = Stopwatch.StartNew();

        Any2OneChannel<ICSPProcess> jobs = new Any2OneChannel<ICSPProcess>();
        One2AnyChannel<ICSPProcess> chan = new One2AnyChannel<ICSPProcess>();

        Worker[] workers = new Worker[3];
        for (int i = 0; i < 3; i++)
            workers[i] = new Worker(i + 1, chan);

        WorkerPool workerPool = new WorkerPool(jobs, chan);

        CountPrimes[] work = new CountPrimes[12];
        for (int i = 0; i < work.Length; i++)
            work[i] = new CountPrimes((i + 1) * 10_000);
        Client client = new Client(jobs, work);

        Console.WriteLine($"Running {work.Length} jobs on {workers.Length} workers:");
        new Parallel(new ICSPProcess[]{workers[0], workers[1], workers[2],
            workerPool, client}).Run();

        Console.WriteLine();
        foreach (Worker worker in workers)
            Console.WriteLine($"Worker {worker.Id} ran {worker.JobsRun} jobs.");
        int done = workers.Sum(worker => worker.JobsRun);
        Console.WriteLine($"{done} of {work.Length} jobs done in {stopwatch.ElapsedMilliseconds} ms; "
            + $"there are {work[^1].Result} primes up to {work[^1].Limit}.");
    }
}
