using System.Collections.Concurrent;

namespace CspNet.Remote.Tests.Workers;

/// <summary>Records which node (program) it ran on.</summary>
internal sealed class WhereAmI : ICSPProcess
{
    internal static readonly ConcurrentDictionary<Guid, string> Seen = new();

    public Guid Id { get; } = Guid.NewGuid();

    public void Run() => Seen[Id] = CspManager.Node.ProgramLabel;
}

/// <summary>Throws, with an inner exception.</summary>
internal sealed class Thrower : ICSPProcess
{
    public void Run() => throw new InvalidOperationException("outer failure", new FormatException("inner failure"));
}

/// <summary>Signals that it started, then blocks until released.</summary>
internal sealed class Blocker : ICSPProcess
{
    public TaskCompletionSource Started { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public ManualResetEventSlim Release { get; } = new();

    public void Run()
    {
        Started.TrySetResult();
        Release.Wait();
    }
}

/// <summary>Listing 4: writes <c>results</c> sums of 1..number-1 to a named channel.</summary>
internal sealed class AddIntegers(int number, int results, string channelName) : ICSPProcess
{
    public void Run()
    {
        IChannelOut<int> result = Factory.GetOne2OneOut<int>(channelName);
        for (int j = 0; j < results; j++)
        {
            int res = 0;
            for (int i = 1; i < number; i++)
            {
                res += i;
            }

            result.Write(res);
        }
    }
}

/// <summary>Listing 5, ending when both writers have written everything (no timer: deterministic).</summary>
internal sealed class AltReader(int expectedEach) : ICSPProcess
{
    internal static readonly ConcurrentDictionary<Guid, int> Results = new();

    public Guid Id { get; } = Guid.NewGuid();

    public void Run()
    {
        AltingChannelIn<int> plus = Factory.GetOne2OneIn<int>("plus");
        AltingChannelIn<int> minus = Factory.GetOne2OneIn<int>("minus");
        var alt = new Alternative([plus, minus]);
        int result = 0;
        for (int n = 0; n < 2 * expectedEach; n++)
        {
            switch (alt.FairSelect())
            {
                case 0:
                    result += plus.Read();
                    break;
                default:
                    result -= minus.Read();
                    break;
            }
        }

        Results[Id] = result;
    }
}
