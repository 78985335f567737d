using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

public class AltSmokeTests
{
    [Fact(Timeout = 20000)]
    public async Task FairSelect_Listing5_SumsAndTimesOut()
    {
        var plusChan = new One2OneChannel<int>();
        var minusChan = new One2OneChannel<int>();
        int result = 0;
        var par = new Parallel();
        par.AddProcess(() => { for (int j = 0; j < 100; j++) plusChan.Write(j); });
        par.AddProcess(() => { for (int j = 0; j < 100; j++) minusChan.Write(1); });
        par.AddProcess(() =>
        {
            AltingChannelIn<int> plus = plusChan.In;
            AltingChannelIn<int> minus = minusChan.In;
            CSTimer timer = new CSTimer();
            Alternative alt = new Alternative(new Guard[] { plus, minus, timer });
            bool done = false;
            while (!done)
            {
                timer.RelativeTimeOut(200);
                switch (alt.FairSelect())
                {
                    case 0: result += plus.Read(); break;
                    case 1: result -= minus.Read(); break;
                    case 2: done = true; break;
                }
            }
        });
        await par.RunAsync();
        Assert.Equal(4950 - 100, result);
    }

    [Fact(Timeout = 20000)]
    public async Task SelectAsync_AsyncAltOverAny2Any_Counts()
    {
        var a = new Any2AnyChannel<int>();
        var b = new Any2AnyChannel<int>();
        var par = new Parallel();
        const int N = 20000;
        par.AddProcess(async ct => { for (int j = 0; j < N; j++) await a.WriteAsync(j, ct); });
        par.AddProcess(() => { for (int j = 0; j < N; j++) b.Write(j); });
        long total = 0;
        par.AddProcess(async ct =>
        {
            var ia = a.CreateIn(); var ib = b.CreateIn();
            var alt = new Alternative(ia, ib);
            for (int k = 0; k < 2 * N; k++)
            {
                int i = await alt.FairSelectAsync(ct);
                total += i == 0 ? await ia.ReadAsync(ct) : ib.Read();
            }
        });
        await par.RunAsync();
        Assert.Equal(2L * N * (N - 1) / 2, total);
    }

    [Fact(Timeout = 20000)]
    public async Task PriSelect_OutputGuardMeetsInputAlt_Delivers()
    {
        var c = new One2OneChannel<int>();
        var par = new Parallel();
        const int N = 20000;
        long sum = 0;
        par.AddProcess(() =>
        {
            var timer = new CSTimer();
            var alt = new Alternative(c.Out, timer);
            for (int j = 0; j < N; j++)
            {
                c.Out.Offer(j);
                timer.RelativeTimeOut(100000);
                Assert.Equal(0, alt.PriSelect());
            }
        });
        par.AddProcess(async ct =>
        {
            var skipNever = new CSTimer();
            var alt = new Alternative(c.In, skipNever);
            for (int j = 0; j < N; j++)
            {
                Assert.Equal(0, await alt.PriSelectAsync(ct));
                sum += c.In.Read();
            }
        });
        await par.RunAsync();
        Assert.Equal((long)N * (N - 1) / 2, sum);
    }
}
