namespace CspNet.Remote.TestJobs;

/// <summary>
/// Writes 0, 1, 2, ... count-1 to a named One2One channel, one value at a time: a reader that
/// checks each value is the next one sees any value lost, repeated or reordered, and a reader that
/// stops reading holds the writer mid-process.
/// </summary>
public sealed class CountingWriter : ICSPProcess
{
    private readonly string channelName;
    private readonly int count;

    public CountingWriter(string channelName, int count)
    {
        this.channelName = channelName;
        this.count = count;
    }

    public void Run()
    {
        AltingChannelOut<int> output = Factory.GetOne2OneOut<int>(channelName);
        for (int i = 0; i < count; i++)
        {
            output.Write(i);
        }
    }
}
