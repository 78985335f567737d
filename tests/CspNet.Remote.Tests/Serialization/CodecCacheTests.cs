using System.Text;
using CspNet.Remote.Internal.Serialization;

namespace CspNet.Remote.Tests.Serialization;

public class CodecCacheTests
{
    public sealed record RacedType(int Value);

    public sealed record Payload(int Thread, string Text);

    [Fact]
    public void Get_FromManyThreadsAtOnce_ReturnsOneInstance()
    {
        ValueCodec<RacedType>[] seen = new ValueCodec<RacedType>[16];
        using System.Threading.Barrier start = new(seen.Length);

        // Dedicated threads: pool threads would be injected one by one while the barrier waits.
        Thread[] threads = [.. Enumerable.Range(0, seen.Length).Select(i => new Thread(() =>
        {
            start.SignalAndWait(TimeSpan.FromSeconds(10));
            seen[i] = ValueCodec<RacedType>.Get();
        }))];
        Array.ForEach(threads, thread => thread.Start());
        Array.ForEach(threads, thread => thread.Join());

        Assert.All(seen, codec => Assert.Same(seen[0], codec));
    }

    [Fact]
    public void JsonWrite_FromManyThreads_EachOutputHoldsItsOwnValue()
    {
        string[] outputs = new string[8_000];

        System.Threading.Tasks.Parallel.For(0, outputs.Length, i =>
            outputs[i] = Encoding.UTF8.GetString(CodecTestSupport.Encode(new Payload(i, new string('x', i % 50)))));

        for (int i = 0; i < outputs.Length; i++)
        {
            Assert.Equal(new Payload(i, new string('x', i % 50)), CodecTestSupport.Decode<Payload>(Encoding.UTF8.GetBytes(outputs[i])));
        }
    }
}
