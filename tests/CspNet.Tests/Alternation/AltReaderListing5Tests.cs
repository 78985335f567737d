using System.Diagnostics;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>The paper's listings 4-6 (AddIntegers and AltReader), on local channels.</summary>
public class AltReaderListing5Tests
{
    /// <summary>Listing 4: writes 100 results, each the sum 1 + ... + (number - 1).</summary>
    private sealed class AddIntegers(int number, IChannelOut<int> result) : ICSPProcess
    {
        public void Run()
        {
            for (int j = 0; j < 100; j++)
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

    /// <summary>Listing 5, with the result, the number of reads and the final wait exposed.</summary>
    private sealed class AltReader(AltingChannelIn<int> plus, AltingChannelIn<int> minus) : ICSPProcess
    {
        public int Result { get; private set; }

        public int Reads { get; private set; }

        public double LastWaitMilliseconds { get; private set; }

        public void Run()
        {
            CSTimer timer = new CSTimer();
            Alternative alt = new Alternative(new Guard[] { plus, minus, timer });

            int result = 0;
            bool done = false;
            while (!done)
            {
                long armed = Stopwatch.GetTimestamp();
                timer.RelativeTimeOut(1000);
                switch (alt.FairSelect())
                {
                    case 0:
                        result += plus.Read();
                        Reads++;
                        break;
                    case 1:
                        result -= minus.Read();
                        Reads++;
                        break;
                    case 2:
                        LastWaitMilliseconds = AltTime.MillisecondsSince(armed);
                        done = true;
                        break;
                }
            }

            Result = result;
        }
    }

    [Theory(Timeout = 30000)]
    [InlineData(100, 100, 0)]
    [InlineData(100, 10, (100 * 4950) - (100 * 45))]
    public async Task FairSelect_Listing5AltReader_SumsEveryResultAndEndsOnTimer(int plusNumber, int minusNumber, int expected)
    {
        One2OneChannel<int> plus = Factory.GetOne2One<int>();
        One2OneChannel<int> minus = Factory.GetOne2One<int>();
        var reader = new AltReader(plus.In, minus.In);

        await new Parallel(new ICSPProcess[]
        {
            reader,
            new AddIntegers(plusNumber, plus),
            new AddIntegers(minusNumber, minus),
        }).RunAsync();

        Assert.Equal(expected, reader.Result);
        Assert.Equal(200, reader.Reads);

        // The reader ended only because nothing came for a whole second.
        Assert.True(reader.LastWaitMilliseconds >= 1000, $"The timer fired after {reader.LastWaitMilliseconds:F3} ms.");
    }
}
