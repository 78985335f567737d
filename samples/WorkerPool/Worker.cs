/// <summary>
/// Listing 2 of the CSP.NET paper: reads a job and runs it on its own thread; takes the next job
/// only when the current one is done. Ends when the pool poisons the workers' channel.
/// </summary>
class Worker : ICSPProcess
{
    private readonly IChannelIn<ICSPProcess> processes;
    private ICSPProcess? process;

    public Worker(int id, IChannelIn<ICSPProcess> listenChannel)
    {
        Id = id;
        processes = listenChannel;
    }

    public int Id { get; }

    public int JobsRun { get; private set; }

    public void Run()
    {
        try
        {
            while (true)
            {
                process = processes.Read();
                process.Run();
                JobsRun++;
            }
        }
        catch (PoisonException)
        {
            // The pool has no more jobs.
        }
    }
}
