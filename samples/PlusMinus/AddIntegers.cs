/// <summary>
/// Listing 4 of the CSP.NET paper: repeatedly adds 1 + 2 + ... + (number - 1) and writes the sum
/// to the named channel. It runs in a writer program; the channel lives in the reader's program,
/// which created it (a One2One channel is hosted by its reading end).
/// </summary>
class AddIntegers : ICSPProcess
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
