namespace CspNet.Tests.Channels;

/// <summary>
/// A channel keeps its own ends (<see cref="CspChannel{T}.In"/>, <see cref="CspChannel{T}.Out"/>)
/// and its reusable async waiters in one field, made when first needed: whichever comes first,
/// each end is made once, and operations work the same before and after.
/// </summary>
public class LazyEndsAndWaitersTests
{
    [Theory(Timeout = 20_000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task InAndOut_MadeWhileAWriteIsParked_TheWriteCompletesAndTheEndsStayTheSame(bool outFirst)
    {
        var channel = new One2OneChannel<int>();
        ValueTask parked = channel.WriteAsync(1); // the channel's first waiter, before any end

        AltingChannelOut<int> output = outFirst ? channel.Out : null!;
        AltingChannelIn<int> input = channel.In;
        output ??= channel.Out;

        Assert.Equal(1, await input.ReadAsync());
        await parked;
        Assert.Same(input, channel.In);
        Assert.Same(output, channel.Out);

        // The waiters moved with the ends: further parked operations in both directions still work.
        for (int i = 2; i < 5; i++)
        {
            ValueTask write = output.WriteAsync(i);
            Assert.Equal(i, await channel.ReadAsync());
            await write;

            ValueTask<int> read = channel.ReadAsync();
            Assert.True(TestChannels.CompletedAtOnce(channel.WriteAsync(-i)));
            Assert.Equal(-i, await read);
        }
    }

    [Fact(Timeout = 20_000)]
    public async Task InAndOut_AskedForFromSeveralThreadsAtOnce_EachEndIsMadeOnce()
    {
        // The rounds run on a pool thread: the timeout applies to async tests only.
        await Task.Run(AskFromSeveralThreads);
    }

    private static void AskFromSeveralThreads()
    {
        for (int round = 0; round < 50; round++)
        {
            var channel = new Any2AnyChannel<int>();
            var ins = new AltingChannelIn<int>[4];
            var outs = new AltingChannelOut<int>[4];
            using var start = new ManualResetEventSlim();
            var threads = new Thread[4];
            for (int t = 0; t < threads.Length; t++)
            {
                int index = t;
                threads[t] = new Thread(() =>
                {
                    start.Wait();
                    if (index % 2 == 0)
                    {
                        outs[index] = channel.Out;
                        ins[index] = channel.In;
                    }
                    else
                    {
                        ins[index] = channel.In;
                        outs[index] = channel.Out;
                    }
                });
                threads[t].Start();
            }

            start.Set();
            foreach (Thread thread in threads)
            {
                Assert.True(thread.Join(TimeSpan.FromSeconds(10)));
            }

            Assert.All(ins, end => Assert.Same(channel.In, end));
            Assert.All(outs, end => Assert.Same(channel.Out, end));
        }
    }
}
