using CspNet.Remote.Tests.Named;
using Xunit.Abstractions;

namespace CspNet.Remote.Tests.Guards;

/// <summary>
/// A writing end whose channel lives in another program as an output guard of an
/// <see cref="Alternative"/>: chosen when the home has a plain reader waiting or buffer room, beside
/// local guards and timers; an offer that loses, times out or is cancelled writes nothing, and no
/// value is lost, written twice or reordered, under poison and lost programs too. Every test runs
/// with the bulk lane on, and off with CSPNET_BULK_LANE=off.
/// </summary>
public sealed class RemoteOutputGuardTests(ITestOutputHelper log)
{
    private const int Timeout = 180_000;
    private const int Sentinel = -1;

    private static async Task<(CspNode Home, CspNode User)> NodesAsync(TestSystem system) =>
        (await system.NodeAsync("home"), await system.NodeAsync("user"));

    /// <summary>
    /// Whether <paramref name="input"/> holds nothing from an offer: a local writer's sentinel is
    /// the next value read. An offer that lost but wrote anyway would come first.
    /// </summary>
    private static async Task AssertNextIsSentinelAsync(AltingChannelIn<int> input, AltingChannelOut<int> local)
    {
        Task write = local.WriteAsync(Sentinel).AsTask();
        Assert.Equal(Sentinel, await input.ReadAsync());
        await write;
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteWriter_PriSelectBesideLocalOutputAndTimer_ChoosesWhatIsReadyAndLosersWriteNothing()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (CspNode home, CspNode user) = await NodesAsync(system);
        AltingChannelIn<int> input = await home.GetAny2OneInAsync<int>("offers");
        AltingChannelOut<int> localAtHome = await home.GetAny2OneOutAsync<int>("offers");
        AltingChannelOut<int> output = await user.GetAny2OneOutAsync<int>("offers");
        var local = new One2OneChannel<int>();
        var timer = new CSTimer();
        var alt = new Alternative([output, local.Out, timer]);

        // Nobody reads anywhere: the timer, and neither offer wrote.
        output.Offer(1);
        local.Out.Offer(2);
        timer.RelativeTimeOut(100);
        Assert.Equal(2, await alt.PriSelectAsync());
        Assert.True(output.HasOffer);
        await AssertNextIsSentinelAsync(input, localAtHome);

        // A reader waits at the home: the remote offer, and the reader gets it.
        timer.ClearTimeOut();
        ValueTask<int> read = input.ReadAsync();
        Assert.Equal(0, await alt.PriSelectAsync());
        Assert.Equal(1, await read);
        Assert.False(output.HasOffer);

        // A local reader, nobody at the home: the local offer, although the remote one comes first.
        output.Offer(3);
        ValueTask<int> localRead = local.In.ReadAsync();
        Assert.Equal(1, await alt.PriSelectAsync());
        Assert.Equal(2, await localRead);
        await AssertNextIsSentinelAsync(input, localAtHome);

        // A blocking selection waits until a reader comes to the home.
        Task<int> blocking = Task.Run(() => alt.PriSelect([true, false, false]));
        Assert.Equal(3, await input.ReadAsync());
        Assert.Equal(0, await blocking);
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteWriter_BufferedChannel_ChosenWhileThereIsRoomAndWritesNothingWhenFull()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (CspNode home, CspNode user) = await NodesAsync(system);
        AltingChannelIn<int> input = await home.GetAny2AnyInAsync<int>("room", new FifoBuffer<int>(2));
        AltingChannelOut<int> localAtHome = await home.GetAny2AnyOutAsync<int>("room");
        AltingChannelOut<int> output = await user.GetAny2AnyOutAsync<int>("room");
        var alt = new Alternative([output, new Skip()]);

        // Room for two: both offers go into the buffer without a reader.
        output.Offer(10);
        Assert.Equal(0, await new Alternative([output]).PriSelectAsync());
        output.Offer(11);
        Assert.Equal(0, await new Alternative([output]).PriSelectAsync());

        // Full: Skip wins every time, and the offer is never written.
        output.Offer(12);
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(1, await alt.PriSelectAsync());
        }

        Assert.Equal(10, await input.ReadAsync());
        Assert.Equal(11, await input.ReadAsync());
        await AssertNextIsSentinelAsync(input, localAtHome);

        // Room again: the offer is chosen once the home says so.
        var timer = new CSTimer();
        timer.RelativeTimeOut(30_000);
        Assert.Equal(0, await new Alternative([output, timer]).PriSelectAsync());
        Assert.Equal(12, await input.ReadAsync());
    }

    [Theory(Timeout = Timeout)]
    [InlineData(0)]
    [InlineData(4)]
    public async Task RemoteWriter_FairSelectWithAlwaysReadyLocalOutput_BothChosen(int capacity)
    {
        const int Rounds = 50;
        await using TestSystem system = await TestSystem.StartAsync();
        (CspNode home, CspNode user) = await NodesAsync(system);

        // Two plain readers at the home, so that one is nearly always waiting for the offer.
        AltingChannelIn<int> first = await home.GetAny2AnyInAsync<int>("fair", capacity == 0 ? null : new FifoBuffer<int>(capacity));
        AltingChannelIn<int> second = await home.GetAny2AnyInAsync<int>("fair");
        AltingChannelOut<int> output = await user.GetAny2AnyOutAsync<int>("fair");
        var local = new One2OneChannel<int>(new InfiniteBuffer<int>());
        var received = new System.Collections.Concurrent.ConcurrentBag<int>();
        async Task ReadAll(AltingChannelIn<int> input)
        {
            try
            {
                while (true)
                {
                    received.Add(await input.ReadAsync());
                }
            }
            catch (PoisonException)
            {
            }
        }

        Task readers = Task.WhenAll(Task.Run(() => ReadAll(first)), Task.Run(() => ReadAll(second)));

        // The first selection learns that the remote end is ready; from then on both nearly always are.
        int next = 0;
        output.Offer(next);
        Assert.Equal(0, await new Alternative([output]).PriSelectAsync());
        output.Offer(++next);

        // Until the remote offer has been chosen Rounds times: a remote guard that is never ready
        // beside the always-ready local one starves, and the test times out.
        int[] chosen = new int[2];
        var alt = new Alternative([output, local.Out]);
        for (int i = 0; chosen[0] < Rounds; i++)
        {
            local.Out.Offer(-i - 10);
            int index = await alt.FairSelectAsync();
            chosen[index]++;
            if (index == 0)
            {
                output.Offer(++next);
            }
        }

        output.Poison();
        await readers;
        log.WriteLine($"remote {chosen[0]}, local {chosen[1]}");
        Assert.Equal(Enumerable.Range(0, chosen[0] + 1), received.Order());

        // FairSelect starts after the last chosen guard: the local one, always ready, gets a turn
        // after every remote choice.
        Assert.True(chosen[1] >= chosen[0] - 1, $"remote {chosen[0]}, local {chosen[1]}");
    }

    /// <summary>
    /// The stress: a selecting writer offers 0, 1, 2, ... through thousands of selections that time
    /// out or are cancelled mid-reservation, while a reader at the home reads with pauses and a local
    /// writer there competes for it. Every offered value arrives exactly once and in order; the
    /// local writer's values all arrive too.
    /// </summary>
    [Theory(Timeout = Timeout)]
    [InlineData(0)]
    [InlineData(8)]
    public async Task RemoteWriter_SelectionsTimeOutAndAreCancelled_EveryValueOnceInOrder(int capacity)
    {
        int count = int.TryParse(Environment.GetEnvironmentVariable("CSPNET_REMOTE_OFFER_ITEMS"), out int n) ? n : 10_000;
        const int LocalCount = 500;
        await using TestSystem system = await TestSystem.StartAsync();
        (CspNode home, CspNode user) = await NodesAsync(system);
        AltingChannelIn<int> input = await home.GetAny2OneInAsync<int>("stress", capacity == 0 ? null : new FifoBuffer<int>(capacity));
        AltingChannelOut<int> localWriter = await home.GetAny2OneOutAsync<int>("stress");
        AltingChannelOut<int> output = await user.GetAny2OneOutAsync<int>("stress");

        var remoteSeen = new List<int>(count);
        int localSeen = 0;
        Task reader = Task.Run(async () =>
        {
            var random = new Random(2);
            while (remoteSeen.Count < count || localSeen < LocalCount)
            {
                int value = await input.ReadAsync();
                if (value < 0)
                {
                    localSeen++;
                }
                else
                {
                    remoteSeen.Add(value);
                }

                if (random.Next(50) == 0)
                {
                    await Task.Delay(random.Next(1, 3));
                }
            }
        });

        Task local = Task.Run(async () =>
        {
            for (int i = 0; i < LocalCount; i++)
            {
                await localWriter.WriteAsync(-1 - i);
            }
        });

        int timeouts = 0, cancellations = 0;
        var selectRandom = new Random(1);
        var timer = new CSTimer();
        var alt = new Alternative([output, timer]);
        for (int next = 0; next < count;)
        {
            output.Offer(next);
            int mode = selectRandom.Next(10);
            int index;
            if (mode < 3)
            {
                timer.ClearTimeOut();
                using var cancellation = new CancellationTokenSource(TimeSpan.FromMilliseconds(selectRandom.Next(0, 2)));
                try
                {
                    index = await alt.FairSelectAsync(cancellation.Token);
                }
                catch (OperationCanceledException)
                {
                    cancellations++;
                    Assert.True(output.HasOffer);
                    continue;
                }
            }
            else
            {
                timer.RelativeTimeOut(selectRandom.Next(0, 3));
                index = mode == 3 ? await Task.Run(() => alt.FairSelect()) : await alt.PriSelectAsync();
            }

            if (index == 1)
            {
                timeouts++;
                Assert.True(output.HasOffer);
                continue;
            }

            Assert.False(output.HasOffer);
            next++;
        }

        await local;
        await reader;
        log.WriteLine($"timeouts {timeouts}, cancellations {cancellations}");
        Assert.Equal(Enumerable.Range(0, count), remoteSeen);
        Assert.Equal(LocalCount, localSeen);
        Assert.True(timeouts > 0 && cancellations > 0, $"timeouts {timeouts}, cancellations {cancellations}");
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteWriter_SelectionCancelledWhileReservationWaits_WritesNothing()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (CspNode home, CspNode user) = await NodesAsync(system);
        AltingChannelIn<int> input = await home.GetAny2OneInAsync<int>("cancel");
        AltingChannelOut<int> localAtHome = await home.GetAny2OneOutAsync<int>("cancel");
        AltingChannelOut<int> output = await user.GetAny2OneOutAsync<int>("cancel");

        for (int i = 0; i < 20; i++)
        {
            output.Offer(100 + i);
            using var cancellation = new CancellationTokenSource(TimeSpan.FromMilliseconds(20));
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await new Alternative([output]).PriSelectAsync(cancellation.Token));
            Assert.True(output.HasOffer);
        }

        // Nothing was written: the next value at the home is a local writer's.
        await AssertNextIsSentinelAsync(input, localAtHome);

        // And the offer still works.
        ValueTask<int> read = input.ReadAsync();
        Assert.Equal(0, await new Alternative([output]).PriSelectAsync());
        Assert.Equal(119, await read);
    }

    [Theory(Timeout = Timeout)]
    [InlineData(0)]
    [InlineData(2)]
    public async Task RemoteWriter_PoisonedAtHome_ChosenAndSelectionThrowsPoison(int capacity)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (CspNode home, CspNode user) = await NodesAsync(system);
        AltingChannelIn<int> input = await home.GetAny2AnyInAsync<int>("poisoned", capacity == 0 ? null : new FifoBuffer<int>(capacity));
        AltingChannelOut<int> output = await user.GetAny2AnyOutAsync<int>("poisoned");
        if (capacity > 0)
        {
            // Fill the buffer so that the selection waits.
            for (int i = 0; i < capacity; i++)
            {
                await output.WriteAsync(i);
            }
        }

        // Poisoned while the selection waits: it is woken and throws; the offer stays.
        var timer = new CSTimer();
        timer.RelativeTimeOut(60_000);
        var alt = new Alternative([output, timer]);
        output.Offer(7);
        Task<int> selecting = alt.PriSelectAsync().AsTask();
        // Most runs poison while the selection waits at the home; either order must end in PoisonException with the offer kept.
        await Task.Delay(200);
        Assert.False(selecting.IsCompleted);
        input.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => selecting);
        Assert.True(output.HasOffer);

        // And every later selection throws at once.
        await Assert.ThrowsAsync<PoisonException>(async () => await alt.PriSelectAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteWriter_KilledHomeProgram_SelectionFailsWithPeerLostNamingTheChannel()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode user = await system.NodeAsync("user");
        ChildNode home = system.Child("read-seq", "Any2One", "lost-home");
        await home.ReadyAsync();
        AltingChannelOut<int> output = await user.GetAny2OneOutAsync<int>("lost-home");
        var timer = new CSTimer();
        var alt = new Alternative([output, timer]);
        for (int i = 0; i < 200; i++)
        {
            output.Offer(i);
            timer.RelativeTimeOut(30_000);
            Assert.Equal(0, await alt.PriSelectAsync());
        }

        await home.KillAsync();
        output.Offer(200);
        var lost = await Assert.ThrowsAsync<PeerLostException>(async () =>
        {
            for (int i = 0; i < 10; i++)
            {
                timer.RelativeTimeOut(30_000);
                await alt.PriSelectAsync();
                output.Offer(201 + i);
            }
        });
        Assert.Contains("'lost-home'", lost.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteWriter_KilledWriterProgram_ValuesInOrderOnceAndClaimedReaderGivenBack()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<int> input = await home.GetAny2OneInAsync<int>("lost-writer");
        AltingChannelOut<int> localAtHome = await home.GetAny2OneOutAsync<int>("lost-writer");
        ChildNode writer = system.Child("offer-seq", "Any2One", "lost-writer");
        await writer.ReadyAsync();
        for (int i = 0; i < 300; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        // A read waits at the home: the writer's next reservation claims it, and the writer is
        // killed before or after it delivers. Either the value comes, or the reader is given back.
        ValueTask<int> read = input.ReadAsync();
        await writer.KillAsync();
        if (!read.IsCompleted)
        {
            Task write = localAtHome.WriteAsync(Sentinel).AsTask();
            int value = await read;
            Assert.True(value is 300 or Sentinel, $"read {value}");
            if (value == 300)
            {
                Assert.Equal(Sentinel, await input.ReadAsync());
            }

            await write;
        }
        else
        {
            Assert.Equal(300, await read);
        }

        // A reader is never left claimed: the home's channel goes on with its other writers.
        await AssertNextIsSentinelAsync(input, localAtHome);
    }

    [Theory(Timeout = Timeout)]
    [InlineData(0)]
    [InlineData(4)]
    public async Task RemoteWriter_LargeOffersBetweenPlainWrites_InWrittenOrder(int capacity)
    {
        const int Size = 1 << 20;
        await using TestSystem system = await TestSystem.StartAsync();
        (CspNode home, CspNode user) = await NodesAsync(system);
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync<byte[]>("large", capacity == 0 ? null : new FifoBuffer<byte[]>(capacity));
        AltingChannelOut<byte[]> output = await user.GetAny2OneOutAsync<byte[]>("large");
        static byte[] Value(int number)
        {
            byte[] value = new byte[Size];
            value.AsSpan().Fill((byte)number);
            BitConverter.TryWriteBytes(value, number);
            return value;
        }

        const int Count = 24;
        Task writer = Task.Run(async () =>
        {
            var alt = new Alternative([output]);
            for (int i = 0; i < Count; i++)
            {
                if (i % 3 == 1)
                {
                    output.Offer(Value(i));
                    Assert.Equal(0, await alt.PriSelectAsync());
                }
                else
                {
                    await output.WriteAsync(Value(i));
                }
            }
        });

        for (int i = 0; i < Count; i++)
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal(Size, value.Length);
            Assert.Equal(i, BitConverter.ToInt32(value));
            Assert.Equal((byte)i, value[Size - 1]);
        }

        await writer;
    }
}
