namespace CspNet.Tests.Processes;

/// <summary>A thread process whose body is a delegate (for <c>AddProcess(process, priority)</c>).</summary>
internal sealed class ActionProcess(Action run) : ICSPProcess
{
    public void Run() => run();
}

/// <summary>An async process whose body is a delegate (for the params constructor).</summary>
internal sealed class AsyncActionProcess(Func<CancellationToken, Task> run) : IAsyncCSPProcess
{
    public Task RunAsync(CancellationToken cancellationToken) => run(cancellationToken);
}

/// <summary>Writes 1..count to its output, then poisons it: the end of the stream.</summary>
internal sealed class CountingProducer(IChannelOut<int> output, int count) : ICSPProcess
{
    public void Run()
    {
        for (int i = 1; i <= count; i++)
        {
            output.Write(i);
        }

        output.Poison();
    }
}

/// <summary>An async process that doubles each value; passes poison on downstream.</summary>
internal sealed class AsyncDoubler(IChannelIn<int> input, IChannelOut<int> output) : IAsyncCSPProcess
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                int value = await input.ReadAsync(cancellationToken);
                await output.WriteAsync(2 * value, cancellationToken);
            }
        }
        catch (PoisonException)
        {
            output.Poison();
        }
    }
}

/// <summary>Helpers shared by the process tests.</summary>
internal static class ProcessTestHelpers
{
    /// <summary>Bound on every blocking wait inside a test, so that a bug fails the test instead of hanging it.</summary>
    public static readonly TimeSpan WaitLimit = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Calls a blocking method on a dedicated thread (not a .NET thread-pool thread, which the
    /// machine may have few of) so that the async test awaiting it keeps its xunit timeout.
    /// </summary>
    public static Task OnOwnThread(Action blocking) =>
        Task.Factory.StartNew(blocking, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    /// <summary>Same as <see cref="OnOwnThread(Action)"/> for a method that returns a value.</summary>
    public static Task<T> OnOwnThread<T>(Func<T> blocking) =>
        Task.Factory.StartNew(blocking, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
}
