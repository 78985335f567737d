using System.Collections.Concurrent;
using Xunit.Abstractions;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// A reading end whose channel lives in another program (One2Any, Any2Any readers) as a guard of
/// an <see cref="Alternative"/>: chosen when its home has a value, beside local channels and
/// timers; a guard that loses, times out or is cancelled takes nothing, and no value is lost or
/// read twice.
/// </summary>
public sealed class RemoteSelectTests(ITestOutputHelper log)
{
    private const int Timeout = 120_000;

    [Fact(Timeout = Timeout)]
    public async Task RemoteOne2AnyReader_PriSelectWithLocalChannelAndTimer_ChoosesWhatIsReady()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelOut<int> output = await host.GetOne2AnyOutAsync<int>("fanout");
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("fanout");
        var local = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative([input, local.In, timer]);

        // Nothing anywhere: the timer.
        timer.RelativeTimeOut(50);
        Assert.Equal(2, await alt.PriSelectAsync());

        // A remote value: the remote end, and the read returns it.
        timer.ClearTimeOut();
        Task write = output.WriteAsync(5).AsTask();
        Assert.Equal(0, await alt.PriSelectAsync());
        Assert.Equal(5, await input.ReadAsync());
        await write;

        // A local value, the remote home empty: the local channel, although the remote end comes first.
        Task local6 = local.Out.WriteAsync(6).AsTask();
        Assert.Equal(1, await alt.PriSelectAsync());
        Assert.Equal(6, await local.In.ReadAsync());
        await local6;

        // A blocking selection, and a blocking read of the chosen value.
        Task write7 = output.WriteAsync(7).AsTask();
        Assert.Equal(0, await Task.Run(() => alt.PriSelect()));
        Assert.Equal(7, await Task.Run(() => input.Read()));
        await write7;
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteReader_FairSelectWithAlwaysReadyLocalGuard_TurnsAlternate()
    {
        const int Each = 50;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelOut<int> output = await host.GetOne2AnyOutAsync<int>("fair", new FifoBuffer<int>(Each + 1));
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("fair");
        var local = new One2OneChannel<int>(new FifoBuffer<int>(Each));
        for (int i = 0; i <= Each; i++)
        {
            await output.WriteAsync(i);
        }

        for (int i = 0; i < Each; i++)
        {
            await local.Out.WriteAsync(i);
        }

        // The first selection learns that the remote end is ready; from then on both always are.
        Assert.Equal(0, await new Alternative([input]).PriSelectAsync());
        Assert.Equal(0, await input.ReadAsync());

        var alt = new Alternative([input, local.In]);
        int[] chosen = new int[2];
        int[] next = [1, 0];
        for (int i = 0; i < 2 * Each; i++)
        {
            int index = await alt.FairSelectAsync();
            chosen[index]++;
            int value = index == 0 ? await input.ReadAsync() : await local.In.ReadAsync();
            Assert.Equal(next[index]++, value);
        }

        Assert.Equal([Each, Each], chosen);
    }

    /// <remarks>
    /// Unbuffered, each reader also sees the one writer's values in order. Buffered, a value given
    /// back goes in front again, but a reader may have taken a later one meanwhile
    /// (docs/DISTRIBUTED.md): only "exactly once" is checked.
    /// </remarks>
    [Theory(Timeout = Timeout)]
    [InlineData(0)]
    [InlineData(8)]
    public async Task RemoteReader_SelectionsTimeOutAndAreCancelled_EveryValueReadExactlyOnce(int capacity)
    {
        int count = int.TryParse(Environment.GetEnvironmentVariable("CSPNET_REMOTE_SELECT_ITEMS"), out int n) ? n : 20_000;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelOut<int> output = await host.GetOne2AnyOutAsync<int>("stress", capacity == 0 ? null : new FifoBuffer<int>(capacity));
        AltingChannelIn<int> homeReader = await host.GetOne2AnyInAsync<int>("stress");
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("stress");
        var seen = new int[count];
        int total = 0;
        var allSeen = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void See(int value)
        {
            Interlocked.Increment(ref seen[value]);
            if (Interlocked.Increment(ref total) == count)
            {
                allSeen.SetResult();
            }
        }

        Task writer = Task.Run(async () =>
        {
            for (int i = 0; i < count; i++)
            {
                await output.WriteAsync(i);
            }
        });

        // A plain reader at the home competes for one value after each selection that timed out
        // or was cancelled (a local reader would otherwise win nearly every value): its read races
        // with the remote end's next reservation.
        var turns = new One2OneChannel<bool>(new InfiniteBuffer<bool>());
        Task local = Task.Run(async () =>
        {
            int last = -1;
            try
            {
                while (await turns.In.ReadAsync())
                {
                    int value = await homeReader.ReadAsync();
                    Assert.True(capacity > 0 || value > last, $"home reader: {value} after {last}");
                    last = value;
                    See(value);
                }
            }
            catch (PoisonException)
            {
            }
        });

        int timeouts = 0, cancellations = 0, remote = 0;
        Task selecting = Task.Run(async () =>
        {
            var random = new Random(1);
            var timer = new CSTimer();
            var alt = new Alternative([input, timer]);
            int last = -1;
            try
            {
                while (true)
                {
                    int index;
                    int mode = random.Next(10);
                    timer.RelativeTimeOut(random.Next(0, 3));
                    if (mode < 3)
                    {
                        using var cancellation = new CancellationTokenSource(TimeSpan.FromMilliseconds(random.Next(0, 2)));
                        timer.ClearTimeOut();
                        try
                        {
                            index = await alt.FairSelectAsync(cancellation.Token);
                        }
                        catch (OperationCanceledException)
                        {
                            cancellations++;
                            await turns.Out.WriteAsync(true);
                            continue;
                        }
                    }
                    else if (mode == 3)
                    {
                        index = await Task.Run(() => alt.FairSelect());
                    }
                    else
                    {
                        index = await alt.PriSelectAsync();
                    }

                    if (index == 1)
                    {
                        timeouts++;
                        await turns.Out.WriteAsync(true);
                        continue;
                    }

                    remote++;
                    int value = await input.ReadAsync();
                    Assert.True(capacity > 0 || value > last, $"remote selecting reader: {value} after {last}");
                    last = value;
                    See(value);
                }
            }
            catch (PoisonException)
            {
            }
        });

        await writer;
        await allSeen.Task;
        output.Poison();
        await selecting;
        turns.Out.Poison();
        await local;
        Assert.All(seen, s => Assert.Equal(1, s));
        log.WriteLine($"remote {remote}, timeouts {timeouts}, cancellations {cancellations}");
        Assert.True(remote > 0 && timeouts > 0, $"remote {remote}, timeouts {timeouts}, cancellations {cancellations}");
    }

    [Fact(Timeout = Timeout)]
    public async Task TwoRemoteSelectingReaders_OneAny2Any_EveryValueReadExactlyOnce()
    {
        const int Count = 2_000;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode first = await system.NodeAsync("first");
        CspNode second = await system.NodeAsync("second");
        AltingChannelOut<int> output = await home.GetAny2AnyOutAsync<int>("shared");
        AltingChannelIn<int>[] inputs = [await first.GetAny2AnyInAsync<int>("shared"), await second.GetAny2AnyInAsync<int>("shared")];
        var seen = new int[Count];
        int total = 0;
        var allSeen = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var chosenBy = new ConcurrentBag<int>();

        Task Reader(int who) => Task.Run(async () =>
        {
            var timer = new CSTimer();
            var idle = new One2OneChannel<int>();
            var alt = new Alternative([idle.In, inputs[who], timer]);
            int last = -1;
            try
            {
                while (true)
                {
                    timer.RelativeTimeOut(5);
                    int index = await alt.FairSelectAsync();
                    if (index != 1)
                    {
                        continue;
                    }

                    int value = await inputs[who].ReadAsync();
                    Assert.True(value > last, $"reader {who}: {value} after {last}");
                    last = value;
                    chosenBy.Add(who);
                    Interlocked.Increment(ref seen[value]);
                    if (Interlocked.Increment(ref total) == Count)
                    {
                        allSeen.SetResult();
                    }
                }
            }
            catch (PoisonException)
            {
            }
        });

        Task[] readers = [Reader(0), Reader(1)];
        for (int i = 0; i < Count; i++)
        {
            await output.WriteAsync(i);
        }

        await allSeen.Task;
        output.Poison();
        await Task.WhenAll(readers);
        Assert.All(seen, s => Assert.Equal(1, s));
        Assert.Contains(0, chosenBy);
        Assert.Contains(1, chosenBy);
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteReader_PoisonedAtHome_ChosenAndReadThrowsPoison()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelOut<int> output = await host.GetOne2AnyOutAsync<int>("doomed");
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("doomed");
        var alt = new Alternative([input, new One2OneChannel<int>().In]);
        Task<int> select = alt.PriSelectAsync().AsTask();

        output.Poison();

        Assert.Equal(0, await select);
        await Assert.ThrowsAsync<PoisonException>(() => input.ReadAsync().AsTask());
    }
}
