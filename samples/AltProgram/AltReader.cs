/// <summary>
/// Listing 5 of the CSP.NET paper: reads the "plus" and "minus" channels fairly, adding what comes
/// from plus and subtracting what comes from minus, and ends when neither has written for one second.
/// </summary>
/// <remarks>
/// Three changes to the listing, each for a reason the listing did not face:
/// <list type="bullet">
/// <item>A silent second before both writers have written may only mean that a writer is still
/// being shipped to its worker, so the reader keeps waiting then (up to 30 seconds in all).</item>
/// <item>When it ends, it poisons both channels: a writer that is still writing gets a
/// PoisonException instead of waiting forever for a reader that has gone.</item>
/// <item>It prints what it read. It runs on a worker, so the line appears in the worker pool's
/// output, which the sample relays.</item>
/// </list>
/// </remarks>
[Serializable]
class AltReader : ICSPProcess
{
    public void Run()
    {
        AltingChannelIn<int> plus = Factory.GetOne2OneIn<int>("plus");
        AltingChannelIn<int> minus = Factory.GetOne2OneIn<int>("minus");

        CSTimer timer = new CSTimer();
        Alternative alt = new Alternative(new Guard[] { plus, minus, timer });

        int result = 0, fromPlus = 0, fromMinus = 0;
        long giveUp = timer.Read() + 30_000;
        bool done = false;
        while (!done)
        {
            timer.RelativeTimeOut(1000);
            switch (alt.FairSelect())
            {
                case 0:
                    result += plus.Read();
                    fromPlus++;
                    break;
                case 1:
                    result -= minus.Read();
                    fromMinus++;
                    break;
                case 2:
                    done = (fromPlus > 0 && fromMinus > 0) || timer.Read() > giveUp;
                    break;
            }
        }

        plus.Poison();
        minus.Poison();
        Console.WriteLine($"AltReader: result {result}, read {fromPlus} from plus and {fromMinus} from minus");
    }
}
