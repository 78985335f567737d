/// <summary>A job: a small process that counts the primes up to a limit, run by whichever worker gets it.</summary>
class CountPrimes : ICSPProcess
{
    public CountPrimes(int limit) => Limit = limit;

    public int Limit { get; }

    public int Result { get; private set; }

    public void Run()
    {
        int count = 0;
        for (int n = 2; n <= Limit; n++)
        {
            bool prime = true;
            for (int d = 2; d * d <= n; d++)
            {
                if (n % d == 0)
                {
                    prime = false;
                    break;
                }
            }

            if (prime)
            {
                count++;
            }
        }

        Result = count;
        Console.WriteLine($"  primes up to {Limit,6}: {Result,5}   ({Thread.CurrentThread.Name})");
    }
}

/// <summary>
/// Stands in for the paper's remote clients: submits jobs to the pool's listen channel, then
/// poisons it to say there will be no more.
/// </summary>
class Client : ICSPProcess
{
    private readonly IChannelOut<ICSPProcess> pool;
    private readonly IReadOnlyList<ICSPProcess> jobs;

    public Client(IChannelOut<ICSPProcess> pool, IReadOnlyList<ICSPProcess> jobs)
    {
        this.pool = pool;
        this.jobs = jobs;
    }

    public void Run()
    {
        foreach (ICSPProcess job in jobs)
        {
            pool.Write(job);
        }

        pool.Poison();
    }
}
