/// <summary>
/// Listing 5 of the CSP.NET paper: reads the "plus" and "minus" channels fairly, adding what comes
/// from plus and subtracting what comes from minus, and ends when neither has written for one second.
/// </summary>
/// <remarks>
/// Two changes. Before both writers have written, a silent second may only mean that they are
/// still starting (a program takes a moment to start and join), so the reader keeps waiting
/// while <c>writersStarting</c> says so. And when it ends, it poisons both channels.
/// </remarks>
class AltReader : ICSPProcess
{
    private readonly Func<bool> writersStarting;

    public AltReader(Func<bool> writersStarting) => this.writersStarting = writersStarting;

    public int Result { get; private set; }

    public int FromPlus { get; private set; }

    public int FromMinus { get; private set; }

    public void Run()
    {
        AltingChannelIn<int> plus = Factory.GetOne2OneIn<int>("plus");
        AltingChannelIn<int> minus = Factory.GetOne2OneIn<int>("minus");

        CSTimer timer = new CSTimer();
        Alternative alt = new Alternative(new Guard[] { plus, minus, timer });

        bool done = false;
        while (!done)
        {
            timer.RelativeTimeOut(1000);
            switch (alt.FairSelect())
            {
                case 0:
                    int p = plus.Read();
                    Result += p;
                    FromPlus++;
                    Console.WriteLine($"plus  {p,6}   result {Result,7}");
                    break;
                case 1:
                    int m = minus.Read();
                    Result -= m;
                    FromMinus++;
                    Console.WriteLine($"minus {m,6}   result {Result,7}");
                    break;
                case 2:
                    done = (FromPlus > 0 && FromMinus > 0) || !writersStarting();
                    break;
            }
        }

        // Not in the listing: a writer that is still writing now gets a PoisonException instead of waiting forever.
        plus.Poison();
        minus.Poison();
    }
}
