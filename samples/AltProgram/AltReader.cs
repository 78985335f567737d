/// <summary>
/// Listing 5 of the CSP.NET paper: reads "plus" and "minus" fairly until neither has written for
/// one second, then writes its result to the named channel <c>resultChannel</c> (the paper printed
/// it on the worker's console, which nobody reads when the worker is a service).
/// </summary>
/// <remarks>
/// The silence only counts once both writers have written: on a worker, the writers may still be
/// starting on another pool (compare samples/PlusMinus, whose reader is told how long to wait).
/// </remarks>
class AltReader : ICSPProcess
{
    private readonly string resultChannel;

    public AltReader(string resultChannel) => this.resultChannel = resultChannel;

    public void Run()
    {
        AltingChannelIn<int> plus = Factory.GetOne2OneIn<int>("plus");
        AltingChannelIn<int> minus = Factory.GetOne2OneIn<int>("minus");

        CSTimer timer = new CSTimer();
        Alternative alt = new Alternative(new Guard[] { plus, minus, timer });

        int result = 0, fromPlus = 0, fromMinus = 0;
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
                    done = fromPlus > 0 && fromMinus > 0;
                    break;
            }
        }

        Console.WriteLine($"AltReader: {fromPlus} from plus, {fromMinus} from minus, result {result}");
        Factory.GetOne2OneOut<int>(resultChannel).Write(result);
    }
}
