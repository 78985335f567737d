/// <summary>
/// Listing 1 of the CSP.NET paper: reads jobs (processes) from its listen channel and hands each to
/// whichever worker is free. The paper's pool got its listen channel by name
/// (<c>Factory.GetAny2OneIn("WorkerPool")</c>); here it is a local channel given by Main.
/// </summary>
class WorkerPool : ICSPProcess
{
    private readonly IChannelIn<ICSPProcess> listenChannel;
    private readonly IChannelOut<ICSPProcess> workers;

    public WorkerPool(IChannelIn<ICSPProcess> listenChannel, IChannelOut<ICSPProcess> workerChannel)
    {
        this.listenChannel = listenChannel;
        workers = workerChannel;
    }

    public void Run()
    {
        try
        {
            while (true)
            {
                ICSPProcess p = listenChannel.Read();
                workers.Write(p);
            }
        }
        catch (PoisonException)
        {
            // The clients have poisoned the listen channel: no more jobs. Pass the poison on so
            // that the workers end once they have finished their current job.
            workers.Poison();
        }
    }
}
