namespace CspNet.Remote.TestJobs;

/// <summary>Listing 4 of the paper: writes <c>results</c> sums of 1..number-1 to a named channel.</summary>
public sealed class AddIntegers : ICSPProcess
{
    private readonly int number;
    private readonly int results;
    private readonly string channelName;

    public AddIntegers(int num, int results, string name)
    {
        number = num;
        this.results = results;
        channelName = name;
    }

    public void Run()
    {
        AltingChannelOut<int> result = Factory.GetOne2OneOut<int>(channelName);
        for (int j = 0; j < results; j++)
        {
            int res = 0;
            for (int i = 1; i < number; i++)
                res += i;

            result.Write(res);
        }
    }
}

/// <summary>
/// Listing 5 of the paper, ending when both writers have written <c>expectedEach</c> values (a test
/// must not depend on a one-second silence), then writing its result to a named channel.
/// </summary>
public sealed class AltReader : ICSPProcess
{
    private readonly int expectedEach;
    private readonly string resultChannel;

    public AltReader(int expectedEach, string resultChannel)
    {
        this.expectedEach = expectedEach;
        this.resultChannel = resultChannel;
    }

    public void Run()
    {
        AltingChannelIn<int> plus = Factory.GetOne2OneIn<int>("plus");
        AltingChannelIn<int> minus = Factory.GetOne2OneIn<int>("minus");
        Alternative alt = new Alternative(new Guard[] { plus, minus });
        int result = 0;
        for (int n = 0; n < 2 * expectedEach; n++)
        {
            switch (alt.FairSelect())
            {
                case 0:
                    result += plus.Read();
                    break;
                case 1:
                    result -= minus.Read();
                    break;
            }
        }

        Factory.GetOne2OneOut<int>(resultChannel).Write(result);
    }
}

/// <summary>Writes the id of the operating-system process it runs in to a named channel.</summary>
public sealed class ReportProcessId : ICSPProcess
{
    private readonly string channelName;

    public ReportProcessId(string channelName) => this.channelName = channelName;

    public void Run() => Factory.GetAny2OneOut<int>(channelName).Write(Environment.ProcessId);
}

/// <summary>
/// Writes the id of its operating-system process to a named channel, then waits for a release on
/// another: while no release is sent, every such process holds its worker, so N of them that all
/// reported were running at the same time on N workers.
/// </summary>
public sealed class ReportProcessIdThenWait : ICSPProcess
{
    private readonly string idChannel;
    private readonly string releaseChannel;

    public ReportProcessIdThenWait(string idChannel, string releaseChannel)
    {
        this.idChannel = idChannel;
        this.releaseChannel = releaseChannel;
    }

    public void Run()
    {
        Factory.GetAny2OneOut<int>(idChannel).Write(Environment.ProcessId);
        Factory.GetOne2AnyIn<bool>(releaseChannel).Read();
    }
}

/// <summary>Says it has started (on a named channel), then blocks until its program is killed.</summary>
public sealed class StartThenHang : ICSPProcess
{
    private readonly string startedChannel;

    public StartThenHang(string startedChannel) => this.startedChannel = startedChannel;

    public void Run()
    {
        Factory.GetOne2OneOut<int>(startedChannel).Write(Environment.ProcessId);
        Thread.Sleep(Timeout.Infinite);
    }
}
