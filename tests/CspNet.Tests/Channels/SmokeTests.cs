namespace CspNet.Tests.Channels;

public class SmokeTests
{
    [Fact(Timeout = 10000)]
    public async Task One2One_ThreadWriterAsyncReader_Delivers()
    {
        var chan = new One2OneChannel<int>();
        var writer = Task.Factory.StartNew(() => { for (int i = 0; i < 100000; i++) chan.Write(i); }, TaskCreationOptions.LongRunning);
        long sum = 0;
        for (int i = 0; i < 100000; i++) sum += await chan.ReadAsync();
        await writer;
        Assert.Equal(99999L * 100000 / 2, sum);
    }
}
