using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Processes;

public class DualKindProcessTests
{
    private sealed class DualKind : ICSPProcess, IAsyncCSPProcess
    {
        public int ThreadRuns;
        public int AsyncRuns;

        public void Run() => Interlocked.Increment(ref ThreadRuns);

        public Task RunAsync(CancellationToken cancellationToken)
        {
            Interlocked.Increment(ref AsyncRuns);
            return Task.CompletedTask;
        }
    }

    [Fact(Timeout = 10000)]
    public async Task AddProcess_ProcessOfBothKinds_CompilesAndRunsAsAsync()
    {
        var process = new DualKind();
        var pool = new CSPThreadPool();
        var par = new Parallel { ThreadPool = pool };
        par.AddProcess(process);

        await par.RunAsync();

        Assert.Equal(1, process.AsyncRuns);
        Assert.Equal(0, process.ThreadRuns);
        Assert.Equal(0, pool.ThreadCount);
    }
}
