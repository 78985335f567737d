namespace CspNet.Remote.Tests.Named;

/// <summary>
/// Named channels, barriers and buckets between this test process and separate child programs
/// (tests/CspNet.Remote.TestNode), each with its own endpoint, all through one NameServer.
/// </summary>
public sealed class CrossProgramTests
{
    private const int Timeout = 60_000;

    [Theory(Timeout = Timeout)]
    [InlineData("One2One", "write")]
    [InlineData("One2One", "write-blocking")]
    [InlineData("Any2One", "write")]
    [InlineData("Any2One", "write-blocking")]
    public async Task ReadingEndHere_ChildProgramWrites_EveryValueArrivesInOrder(string kind, string scenario)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("reader");
        string name = "numbers-" + kind;
        AltingChannelIn<int> input = kind == "One2One" ? await node.GetOne2OneInAsync<int>(name) : await node.GetAny2OneInAsync<int>(name);
        ChildNode writer = system.Child(scenario, kind, name, "500");
        for (int i = 0; i < 500; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        await writer.WaitForAsync("done wrote 500");
        Assert.Equal(0, await writer.ExitAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task Any2One_TwoWriterPrograms_ReaderGetsEveryValueOfBoth()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetAny2OneInAsync<int>("shared");
        ChildNode first = system.Child("write", "Any2One", "shared", "300");
        ChildNode second = system.Child("write-blocking", "Any2One", "shared", "300");
        long sum = 0;
        for (int i = 0; i < 600; i++)
        {
            sum += await input.ReadAsync();
        }

        Assert.Equal(2L * (299 * 300 / 2), sum);
        await first.WaitForAsync("done");
        await second.WaitForAsync("done");
    }

    [Theory(Timeout = Timeout)]
    [InlineData("One2Any", "read")]
    [InlineData("One2Any", "read-blocking")]
    [InlineData("Any2Any", "read")]
    [InlineData("Any2Any", "read-blocking")]
    public async Task SharedReadingEnds_TwoReaderPrograms_EachValueReadExactlyOnce(string kind, string scenario)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("writer");
        AltingChannelOut<int> output = kind == "One2Any" ? await node.GetOne2AnyOutAsync<int>("work") : await node.GetAny2AnyOutAsync<int>("work");
        ChildNode first = system.Child(scenario, kind, "work", "200");
        ChildNode second = system.Child("read", kind, "work", "200");
        for (int i = 0; i < 400; i++)
        {
            await output.WriteAsync(i);
        }

        long a = long.Parse((await first.WaitForAsync("done sum")).Split(' ')[2], System.Globalization.CultureInfo.InvariantCulture);
        long b = long.Parse((await second.WaitForAsync("done sum")).Split(' ')[2], System.Globalization.CultureInfo.InvariantCulture);
        Assert.Equal(399L * 400 / 2, a + b);
    }

    [Fact(Timeout = Timeout)]
    public async Task Listing5_AlternativeOverTwoProgramsAndATimer_ReadsEverythingThenTimesOut()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("alt-reader");
        AltingChannelIn<int> plus = await node.GetOne2OneInAsync<int>("plus");
        AltingChannelIn<int> minus = await node.GetOne2OneInAsync<int>("minus");
        system.Child("write", "One2One", "plus", "100");
        system.Child("write", "One2One", "minus", "100");
        var timer = new CSTimer();
        var alt = new Alternative([plus, minus, timer]);
        int fromPlus = 0, fromMinus = 0;
        while (true)
        {
            // Until every value is in, the timer only guards against a hang: child programs can take
            // many seconds to start on a loaded machine. Then it ends the loop, as in listing 5.
            timer.RelativeTimeOut(fromPlus == 100 && fromMinus == 100 ? 50 : 30_000);
            int chosen = await alt.FairSelectAsync();
            if (chosen == 2)
            {
                break;
            }

            int value = await (chosen == 0 ? plus : minus).ReadAsync();
            Assert.Equal(chosen == 0 ? fromPlus++ : fromMinus++, value);
        }

        Assert.Equal((100, 100), (fromPlus, fromMinus));
    }

    [Fact(Timeout = Timeout)]
    public async Task NamedBarrier_PartiesInThreePrograms_AllPassEveryRound()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("barrier-host");
        NamedBarrier barrier = await node.GetBarrierAsync("phase", enrolled: 3);
        ChildNode first = system.Child("barrier", "phase", "20");
        ChildNode second = system.Child("barrier", "phase", "20");
        for (int i = 0; i < 20; i++)
        {
            await barrier.SyncAsync();
        }

        await first.WaitForAsync("done synced 20");
        await second.WaitForAsync("done synced 20");
    }

    [Fact(Timeout = Timeout)]
    public async Task NamedBucket_FlushedByAnotherProgram_ReleasesTheFallenProcess()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("bucket-host");
        NamedBucket bucket = await node.GetBucketAsync("gate");

        // This program hosts the bucket, so the fall is in it before FallAsync returns.
        ValueTask fall = bucket.FallAsync();
        Assert.False(fall.IsCompleted);
        ChildNode flusher = system.Child("bucket-flush", "gate");
        Assert.Equal("done flushed 1", await flusher.WaitForAsync("done"));
        await fall;
    }

    [Fact(Timeout = Timeout)]
    public async Task Poison_FromTheWritingProgram_ReachesTheReaderHere()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetOne2OneInAsync<int>("doomed");
        ChildNode writer = system.Child("poison-out", "One2One", "doomed");
        await writer.ReadyAsync();
        await Assert.ThrowsAsync<PoisonException>(async () => await input.ReadAsync());
        writer.CloseInput();
        await writer.WaitForAsync("done poisoned");
    }

    [Fact(Timeout = Timeout)]
    public async Task Poison_FromHere_ReachesTheReadingProgram()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("writer");
        ChildNode reader = system.Child("read-until-poison", "One2One", "doomed");
        AltingChannelOut<int> output = await node.GetOne2OneOutAsync<int>("doomed");
        for (int i = 0; i < 10; i++)
        {
            await output.WriteAsync(i);
        }

        output.Poison();
        Assert.Equal("done poisoned after 10", await reader.WaitForAsync("done"));
        await Assert.ThrowsAsync<PoisonException>(async () => await output.WriteAsync(11));
    }

    [Fact(Timeout = Timeout)]
    public async Task KilledWriterProgram_ReaderBlockedHere_FailsWithinThePeerTimeout()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetOne2OneInAsync<int>("fragile");
        ChildNode writer = system.Child("hold-out", "One2One", "fragile");
        await writer.ReadyAsync();
        ValueTask<int> read = input.ReadAsync();
        var clock = System.Diagnostics.Stopwatch.StartNew();
        await writer.KillAsync();
        var lost = await Assert.ThrowsAsync<PeerLostException>(async () => await read);
        Assert.Contains("'fragile'", lost.Message, StringComparison.Ordinal);
        Assert.True(clock.Elapsed < TestSystem.PeerTimeout * 3, $"noticed after {clock.Elapsed}");
    }

    [Fact(Timeout = Timeout)]
    public async Task KilledHomeProgram_RemoteReaderHere_FailsWithPeerLost()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("reader");
        ChildNode home = system.Child("hold-out", "One2Any", "orphan");
        await home.ReadyAsync();
        AltingChannelIn<int> input = await node.GetOne2AnyInAsync<int>("orphan");
        ValueTask<int> read = input.ReadAsync();
        await home.KillAsync();
        await Assert.ThrowsAsync<PeerLostException>(async () => await read);
        await Assert.ThrowsAsync<PeerLostException>(async () => await input.ReadAsync());
    }

    [Fact(Timeout = 120_000)]
    public async Task CancelledRemoteReads_100kValuesAcrossPrograms_NoneLostOrDuplicated()
    {
        const int Count = 100_000;
        const int Readers = 8;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("readers");
        ChildNode writer = system.Child("write", "One2Any", "stream", Count.ToString(System.Globalization.CultureInfo.InvariantCulture));
        var ends = new AltingChannelIn<int>[Readers];
        for (int i = 0; i < Readers; i++)
        {
            ends[i] = await node.GetOne2AnyInAsync<int>("stream");
        }

        // Several readers compete for each value, and every third read is cancelled as soon as it
        // is sent: the cancellation races the home's read of a value another reader may want too.
        var seen = new int[Count];
        int received = 0, cancelled = 0;
        using var allRead = new CancellationTokenSource();
        async Task ReadLoop(AltingChannelIn<int> input)
        {
            for (int n = 0; !allRead.IsCancellationRequested; n++)
            {
                using var cts = CancellationTokenSource.CreateLinkedTokenSource(allRead.Token);
                ValueTask<int> read = input.ReadAsync(cts.Token);
                if (n % 3 == 0)
                {
                    cts.Cancel();
                }

                try
                {
                    int value = await read;
                    Interlocked.Increment(ref seen[value]);
                    if (Interlocked.Increment(ref received) == Count)
                    {
                        allRead.Cancel();
                    }
                }
                catch (OperationCanceledException)
                {
                    Interlocked.Increment(ref cancelled);
                }
            }
        }

        await Task.WhenAll(ends.Select(ReadLoop));
        await writer.WaitForAsync("done wrote");
        Assert.Equal(Count, received);
        Assert.DoesNotContain(seen, times => times != 1);
        Assert.True(cancelled > Readers, $"only {cancelled} reads were cancelled: the test did not exercise the race");
    }

    [Fact(Timeout = Timeout)]
    public async Task NameServerRestart_ProgramsReRegister_OldLinksAndNewLookupsWork()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<int> input = await host.GetAny2OneInAsync<int>("survivor");
        AltingChannelOut<int> output = await user.GetAny2OneOutAsync<int>("survivor");
        Task write = output.WriteAsync(1).AsTask();
        Assert.Equal(1, await input.ReadAsync());
        await write;

        await system.RestartNameServerAsync();

        // The NameServer is not on the data path: the link made before goes on.
        write = output.WriteAsync(2).AsTask();
        Assert.Equal(2, await input.ReadAsync());
        await write;

        // A program that looks the name up now finds it: the host registered it again.
        ChildNode late = system.Child("write", "Any2One", "survivor", "3");
        for (int i = 0; i < 3; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        await late.WaitForAsync("done wrote 3");
    }
}
