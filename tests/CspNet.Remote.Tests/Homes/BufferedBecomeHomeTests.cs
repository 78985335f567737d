using System.Diagnostics;
using System.Globalization;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Homes;

/// <summary>
/// A program holding ends of a buffered Any2Any or of a One2Any channel takes its home while every
/// program goes on using it (CspNode.BecomeHomeAsync; docs/DISTRIBUTED.md, "A moving home"): the
/// writers stop spending credits, the old home's own ends stop at the core, the buffer's values
/// travel in order, and no value is lost or duplicated. The old homes and the other writers are
/// separate programs (tests/CspNet.Remote.TestNode).
/// </summary>
public sealed class BufferedBecomeHomeTests
{
    private const int Count = 10_000;
    private const int SecondWriter = 1_000_000; // the second writer's values start here
    private static readonly string CountText = Count.ToString(CultureInfo.InvariantCulture);

    [Theory(Timeout = 180_000)]
    [InlineData("fifo", 16)]
    [InlineData("infinite", 0)]
    public async Task BecomeHomeAsync_ReaderTakesABufferedHomeWhileTheHomeAndAnotherProgramWrite_EveryValueOnceInOrderPerWriter(string buffer, int slots)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-buffered-write-from", "Any2Any", "stream", buffer, slots.ToString(CultureInfo.InvariantCulture), "0", CountText);
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("stream");
        ChildNode writer = system.Child("write-from", "stream", SecondWriter.ToString(CultureInfo.InvariantCulture), CountText);
        await writer.ReadyAsync();

        int nextFromHome = 0, nextFromWriter = SecondWriter;
        Task? moving = null;
        for (int n = 0; n < 2 * Count; n++)
        {
            if (n == Count / 2)
            {
                // Moved while this program reads on, the buffer holds values, and the other writer's credited values are on their way.
                moving = node.BecomeHomeAsync("stream");
            }

            int value = await input.ReadAsync();
            if (value < SecondWriter)
            {
                Assert.Equal(nextFromHome++, value);
            }
            else
            {
                Assert.Equal(nextFromWriter++, value);
            }
        }

        await moving!;
        await home.WaitForAsync($"done wrote {CountText}");
        await writer.WaitForAsync($"done wrote {CountText}");
        Assert.True(HostsHere(node, "stream"));
        Assert.Equal(node.Port, (await node.Names!.ResolveRecordAsync("stream", CancellationToken.None)).Port);
    }

    [Theory(Timeout = 120_000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task BecomeHomeAsync_LargeValuesOnAndOffTheLane_EveryValueOnceInOrder(bool lane)
    {
        const int Total = 600;
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-leave-buffered", "big", "fifo", "16", "bytes");
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<byte[]> input = await node.GetAny2AnyInAsync<byte[]>("big");
        ChildNode writer = lane
            ? system.Child("write-bytes-any", "big", Total.ToString(CultureInfo.InvariantCulture))
            : system.Child("write-bytes-any", "big", Total.ToString(CultureInfo.InvariantCulture), "lane-off");

        for (int i = 0; i < Total / 3; i++)
        {
            Assert.Equal(i, BitConverter.ToInt32(await input.ReadAsync()));
        }

        // The writer fills the buffer (and has values in flight) while this program takes the home.
        Task moving = node.BecomeHomeAsync("big");
        for (int i = Total / 3; i < Total; i++)
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal(i, BitConverter.ToInt32(value));
            Assert.Equal(i % 2 == 0 ? 40 << 10 : 16, value.Length);
        }

        await moving;
        Assert.True(HostsHere(node, "big"));
        await writer.WaitForAsync($"done wrote {Total}");
        Assert.Equal(0, await writer.ExitAsync());
    }

    [Fact(Timeout = 180_000)]
    public async Task BecomeHomeAsync_One2AnyReaderTakesTheHomeFromItsWriter_ReadersReadEveryValueOnceThenThePoison()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-buffered-write-from", "One2Any", "fan", "fifo", "16", "0", CountText);
        await home.ReadyAsync();
        CspNode first = await system.NodeAsync("first");
        CspNode second = await system.NodeAsync("second");
        AltingChannelIn<int> a = await first.GetOne2AnyInAsync<int>("fan");
        AltingChannelIn<int> b = await second.GetOne2AnyInAsync<int>("fan");

        Task<List<int>> readingB = ReadUntilPoisonAsync(b);
        List<int> readA = [];
        Task? moving = null;
        Task<List<int>>? restOfA = null;
        while (restOfA is null)
        {
            readA.Add(await a.ReadAsync());
            if (readA.Count == Count / 4)
            {
                // The writer's own (single) end stays with its program and writes on at the new home.
                moving = first.BecomeHomeAsync("fan");
                restOfA = ReadUntilPoisonAsync(a);
            }
        }

        await moving!;
        Assert.True(HostsHere(first, "fan"));

        // The single writing end is still the old home's: no other program gets one at the new home.
        CspNode stranger = await system.NodeAsync("stranger");
        var refused = await Assert.ThrowsAsync<NameAlreadyRegisteredException>(async () => await stranger.GetOne2AnyOutAsync<int>("fan"));
        Assert.Contains("cannot be created", refused.Message, StringComparison.Ordinal);

        await home.WaitForAsync($"done wrote {CountText}");
        await home.WriteLineAsync("poison");
        await home.WaitForAsync("poisoned");
        readA.AddRange(await restOfA);
        List<int> readB = await readingB;
        Assert.Equal(Enumerable.Range(0, Count), readA.Concat(readB).Order());
        Assert.Equal(readA.Order(), readA);
        Assert.Equal(readB.Order(), readB);
    }

    [Fact(Timeout = 180_000)]
    public async Task BecomeHomeAsync_One2AnyReaderThatTookTheHomeLeaves_TheChannelMovesOnUnpoisonedAndEveryValueIsReadOnce()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-buffered-write-from", "One2Any", "relay", "fifo", "16", "0", CountText);
        await home.ReadyAsync();
        CspNode first = await system.NodeAsync("first");
        CspNode second = await system.NodeAsync("second");
        AltingChannelIn<int> a = await first.GetOne2AnyInAsync<int>("relay");
        AltingChannelIn<int> b = await second.GetOne2AnyInAsync<int>("relay");
        List<int> readA = [];
        for (int i = 0; i < Count / 4; i++)
        {
            readA.Add(await a.ReadAsync());
        }

        await first.BecomeHomeAsync("relay");
        for (int i = 0; i < Count / 4; i++)
        {
            readA.Add(await a.ReadAsync());
        }

        // Its writer lives in another program, so the channel is not poisoned when this home leaves: it moves on.
        await first.DisposeAsync();
        Task<List<int>> readingB = ReadUntilPoisonAsync(b);
        await home.WaitForAsync($"done wrote {CountText}");
        await home.WriteLineAsync("poison");
        await home.WaitForAsync("poisoned");
        List<int> readB = await readingB;
        Assert.Equal(Enumerable.Range(0, Count), readA.Concat(readB).Order());
        Assert.Equal(readB.Order(), readB);
    }

    [Fact(Timeout = 120_000)]
    public async Task BecomeHomeAsync_PoisonedWhileItMoves_ValuesBeforeThePoisonAreReadOnceInOrderThenThePoison()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-leave-buffered", "sick", "fifo", "16");
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("sick");
        ChildNode writer = system.Child("write", "Any2Any", "sick", CountText);
        for (int i = 0; i < 100; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        // The poison reaches the channel at its old home or its new one, whichever holds it then.
        Task moving = node.BecomeHomeAsync("sick");
        input.Poison();
        List<int> rest = await ReadUntilPoisonAsync(input);
        await moving;

        Assert.Equal(Enumerable.Range(100, rest.Count), rest);
        Assert.True(HostsHere(node, "sick"));
        string failed = await writer.WaitForAsync("failed");
        Assert.Contains("PoisonException", failed, StringComparison.Ordinal);
    }

    [Fact(Timeout = 60_000)]
    public async Task BecomeHomeAsync_UsersOwnBuffer_RefusedSayingWhichBuffersMoveAndTheChannelGoesOn()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode asker = await system.NodeAsync("asker");
        AltingChannelIn<int> atHome = await home.GetAny2AnyInAsync("own", new OwnBuffer());
        AltingChannelOut<int> output = await asker.GetAny2AnyOutAsync<int>("own");
        await output.WriteAsync(1);

        var refused = await Assert.ThrowsAsync<InvalidOperationException>(() => asker.BecomeHomeAsync("own"));
        Assert.Contains("FifoBuffer, InfiniteBuffer or OverwriteOldestBuffer", refused.Message, StringComparison.Ordinal);

        Assert.Equal(home.Port, (await asker.Names!.ResolveRecordAsync("own", CancellationToken.None)).Port);
        await output.WriteAsync(2);
        Assert.Equal(1, await atHome.ReadAsync());
        Assert.Equal(2, await atHome.ReadAsync());
    }

    [Fact(Timeout = 60_000)]
    public async Task BecomeHomeAsync_One2OneChannel_RefusedSayingItsReaderHoldsItsHome()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode asker = await system.NodeAsync("asker");
        AltingChannelIn<int> atHome = await home.GetOne2OneInAsync<int>("single");
        AltingChannelOut<int> output = await asker.GetOne2OneOutAsync<int>("single");

        var refused = await Assert.ThrowsAsync<InvalidOperationException>(() => asker.BecomeHomeAsync("single"));
        Assert.Contains("Any2Any or One2Any", refused.Message, StringComparison.Ordinal);

        Task writing = output.WriteAsync(7).AsTask();
        Assert.Equal(7, await atHome.ReadAsync());
        await writing;
    }

    /// <summary>The home's PeerTimeout in the tests that freeze a writer with SIGSTOP.</summary>
    private static readonly TimeSpan FrozenBound = TimeSpan.FromSeconds(15);

    [Fact(Timeout = 120_000)]
    public async Task BecomeHomeAsync_CancelledWhileTheHomeQuiesces_NothingMovesAndEveryValueIsReadOnceInOrder()
    {
        if (!OperatingSystem.IsLinux())
        {
            return; // freezes a program with SIGSTOP
        }

        await using TestSystem system = await TestSystem.StartAsync();
        // A frozen program, resumed on a loaded machine, may take seconds to answer: the
        // home's bound (its PeerTimeout) leaves room for that, so that only the test's own
        // cancellation ends the first move and the second waits for a late answer.
        CspNode home = await system.NodeAsync("home", o => o.PeerTimeout = FrozenBound);
        AltingChannelIn<int> atHome = await home.GetAny2AnyInAsync("held", new FifoBuffer<int>(16));
        CspNode asker = await system.NodeAsync("asker");
        _ = await asker.GetAny2AnyInAsync<int>("held");
        ChildNode writer = system.Child("write", "Any2Any", "held", CountText);
        const int Before = 200;
        for (int i = 0; i < Before; i++)
        {
            Assert.Equal(i, await atHome.ReadAsync());
        }

        // The writer spends credits; frozen, it cannot confirm it has stopped, so the home's quiesce waits.
        Home hosted = home.HostedHomes.TryGetValue("held", out Home? found) ? found! : throw new InvalidOperationException("not hosted");
        using var cancel = new CancellationTokenSource();
        Signal("STOP", writer.Id);
        Task moving;
        Task began = MoveBegins("held");
        try
        {
            moving = asker.BecomeHomeAsync("held", cancel.Token);
            await began.WaitAsync(TimeSpan.FromSeconds(30));
            await cancel.CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => moving);
        }
        finally
        {
            Signal("CONT", writer.Id);
            HomeMover.MoveBeganForTests.TryRemove("held", out _);
        }

        // Nothing moved: the home holds the channel, and the writer's values come on here, each once, in order.
        Assert.Null(hosted.Move);
        Assert.True(HostsHere(home, "held"));
        Assert.False(HostsHere(asker, "held"));
        Assert.Equal(home.Port, (await asker.Names!.ResolveRecordAsync("held", CancellationToken.None)).Port);
        for (int i = Before; i < Count; i++)
        {
            Assert.Equal(i, await atHome.ReadAsync());
        }

        await writer.WaitForAsync($"done wrote {CountText}");
    }

    [Fact(Timeout = 120_000)]
    public async Task BecomeHomeAsync_CancelledWhileTheHomesReadWaits_TheNextMoveStillTakesThatReadAlong()
    {
        if (!OperatingSystem.IsLinux())
        {
            return; // freezes a program with SIGSTOP
        }

        const int Before = 5;
        await using TestSystem system = await TestSystem.StartAsync();
        // A frozen program, resumed on a loaded machine, may take seconds to answer: the
        // home's bound (its PeerTimeout) leaves room for that, so that only the test's own
        // cancellation ends the first move and the second waits for a late answer.
        CspNode home = await system.NodeAsync("home", o => o.PeerTimeout = FrozenBound);
        AltingChannelIn<int> atHome = await home.GetAny2AnyInAsync("again", new FifoBuffer<int>(16));
        CspNode asker = await system.NodeAsync("asker");
        _ = await asker.GetAny2AnyOutAsync<int>("again");
        ChildNode writer = system.Child("write-pause", "Any2Any", "again", CountText, Before.ToString(CultureInfo.InvariantCulture));
        await writer.WaitForAsync("paused");
        for (int i = 0; i < Before; i++)
        {
            Assert.Equal(i, await atHome.ReadAsync());
        }

        // This read waits at the home's core through a move that is cancelled before the home's ends stop.
        Task<int> waiting = atHome.ReadAsync().AsTask();
        Assert.True(HostsHere(home, "again"));
        using var cancel = new CancellationTokenSource();
        Signal("STOP", writer.Id);
        Task began = MoveBegins("again");
        try
        {
            Task moving = asker.BecomeHomeAsync("again", cancel.Token);
            await began.WaitAsync(TimeSpan.FromSeconds(30));
            await cancel.CancelAsync();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => moving);
        }
        finally
        {
            Signal("CONT", writer.Id);
            HomeMover.MoveBeganForTests.TryRemove("again", out _);
        }

        // The next move stops that read too, and it takes the writer's next value at the new home.
        await asker.BecomeHomeAsync("again");
        Assert.True(HostsHere(asker, "again"));
        writer.CloseInput();
        Assert.Equal(Before, await waiting);
        for (int i = Before + 1; i < Count; i++)
        {
            Assert.Equal(i, await atHome.ReadAsync());
        }

        await writer.WaitForAsync($"done wrote {CountText}");
    }

    /// <summary>Completes once a live move of the home of <paramref name="name"/> has begun (its quiesce is under way).</summary>
    private static Task MoveBegins(string name)
    {
        var began = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        HomeMover.MoveBeganForTests[name] = () => began.TrySetResult();
        return began.Task;
    }

    private static async Task<List<int>> ReadUntilPoisonAsync(AltingChannelIn<int> input)
    {
        List<int> read = [];
        try
        {
            for (; ; )
            {
                read.Add(await input.ReadAsync());
            }
        }
        catch (PoisonException)
        {
            return read;
        }
    }

    private static void Signal(string signal, int processId)
    {
        using Process kill = Process.Start("kill", ["-" + signal, processId.ToString(CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
        Assert.Equal(0, kill.ExitCode);
    }

    private static bool HostsHere(CspNode node, string name) => node.HostedHomes.TryGetValue(name, out Home? _);

    /// <summary>A user's own buffer: another program cannot rebuild it.</summary>
    private sealed class OwnBuffer : IBuffer<int>
    {
        private readonly Queue<int> _values = new();

        public int Count => _values.Count;

        public bool IsFull => _values.Count >= 4;

        public void Put(int item) => _values.Enqueue(item);

        public int Take() => _values.Dequeue();
    }
}
