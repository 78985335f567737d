/// <summary>
/// Listing 4 of the CSP.NET paper, as printed: adds 1 + 2 + ... + (number - 1) a hundred times and
/// writes each sum to the named channel. <c>[Serializable]</c> is what the paper asked of a process
/// that travels; CspNet ships every field of such a process (docs/SHIPPING.md).
/// </summary>
[Serializable]
class AddIntegers : ICSPProcess
{
    private int number;
    private string channelName;

    public AddIntegers(int num, string name)
    {
        number = num;
        channelName = name;
    }

    public void Run()
    {
        AltingChannelOut<int> result = Factory.GetOne2OneOut<int>(channelName);

        for (int j = 0; j < 100; j++)
        {
            int res = 0;
            for (int i = 1; i < number; i++)
                res += i;

            result.Write(res);
        }
    }
}
