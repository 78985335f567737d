using System.Globalization;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Homes;

/// <summary>
/// A program holding ends of an Any2Any channel takes its home while every program goes
/// on using it (CspNode.BecomeHomeAsync; docs/DISTRIBUTED.md, "A moving home"): the old home is a
/// separate program (tests/CspNet.Remote.TestNode) whose own ends keep working, now remote, and no
/// value is lost or duplicated.
/// </summary>
public sealed class BecomeHomeTests
{
    private const int Count = 10_000;
    private const int SecondWriter = 1_000_000; // the second writer's values start here
    private static readonly string CountText = Count.ToString(CultureInfo.InvariantCulture);

    [Fact(Timeout = 180_000)]
    public async Task BecomeHomeAsync_ReaderTakesTheHomeWhileTheHomeAndAnotherProgramWrite_EveryValueOnceInOrderPerWriter()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-write-from", "stream", "0", CountText);
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
                // Moved while this program reads on and both writers wait to write.
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
        Assert.Equal(Count, nextFromHome);
        Assert.Equal(SecondWriter + Count, nextFromWriter);
        await home.WaitForAsync($"done wrote {CountText}");
        await writer.WaitForAsync($"done wrote {CountText}");
        Assert.Equal(node.Port, (await node.Names!.ResolveRecordAsync("stream", CancellationToken.None)).Port);
        Assert.True(HostsHere(node, "stream"));
    }

    [Theory(Timeout = 120_000)]
    [InlineData("home-read-order")]
    [InlineData("home-select-order")]
    public async Task BecomeHomeAsync_HomesOwnReaderWaits_ItsReadCompletesAtTheNewHomeWithTheNextValue(string scenario)
    {
        const int Total = 200;
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child(scenario, "waits", Total.ToString(CultureInfo.InvariantCulture));
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("writer");
        AltingChannelOut<int> output = await node.GetAny2AnyOutAsync<int>("waits");
        await output.WriteAsync(0);

        // The home's next read (or selection) now waits at its own core channel; nothing else is written.
        await home.WaitForAsync("read 0");
        await node.BecomeHomeAsync("waits");
        Assert.True(HostsHere(node, "waits"));

        // Each write completes only once the old home's end, now remote, has taken it: the old home
        // checks that they come 1, 2, 3, ... (a lost or duplicated value would break the order).
        for (int i = 1; i < Total; i++)
        {
            await output.WriteAsync(i);
        }

        await home.WaitForAsync($"done read {Total}");
    }

    [Fact(Timeout = 120_000)]
    public async Task BecomeHomeAsync_HomesOwnOfferWaitsInASelection_OfferIsWrittenAtTheNewHomeOnce()
    {
        const int Total = 200;
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-offer-order", "offers", Total.ToString(CultureInfo.InvariantCulture));
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("offers");
        Assert.Equal(0, await input.ReadAsync());

        // The home's next offer now waits in its selection at its own core channel.
        await home.WaitForAsync("wrote 0");
        await node.BecomeHomeAsync("offers");
        Assert.True(HostsHere(node, "offers"));

        for (int i = 1; i < Total; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        await home.WaitForAsync($"done wrote {Total}");
    }

    [Fact(Timeout = 60_000)]
    public async Task BecomeHomeAsync_ProgramHoldsNoEnd_ThrowsInvalidOperationSayingSo()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-read-order", "elsewhere", "1");
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("stranger");

        var refused = await Assert.ThrowsAsync<InvalidOperationException>(() => node.BecomeHomeAsync("elsewhere"));
        Assert.Contains("holds no end", refused.Message, StringComparison.Ordinal);
    }

    [Theory(Timeout = 60_000)]
    [InlineData("fifo")]
    [InlineData("infinite")]
    [InlineData("overwrite")]
    public async Task BecomeHomeAsync_BufferedChannelHoldsValues_TheyMoveAndTheOldHomesReaderReadsThemOnceInOrder(string buffer)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode asker = await system.NodeAsync("asker");
        IBuffer<int> made = buffer switch
        {
            "fifo" => new FifoBuffer<int>(4),
            "infinite" => new InfiniteBuffer<int>(),
            _ => new OverwriteOldestBuffer<int>(2),
        };
        AltingChannelIn<int> atHome = await home.GetAny2AnyInAsync("buffered", made);
        AltingChannelOut<int> output = await asker.GetAny2AnyOutAsync<int>("buffered");
        for (int i = 1; i <= 3; i++)
        {
            await output.WriteAsync(i);
        }

        await asker.BecomeHomeAsync("buffered");

        // The buffer moved with its values (an OverwriteOldestBuffer(2) kept the last two); the old
        // home's reader, now a remote end, reads them there, then what is written after.
        Assert.True(HostsHere(asker, "buffered"));
        Assert.False(HostsHere(home, "buffered"));
        int[] moved = buffer == "overwrite" ? [2, 3] : [1, 2, 3];
        foreach (int value in moved)
        {
            Assert.Equal(value, await atHome.ReadAsync());
        }

        await output.WriteAsync(4);
        Assert.Equal(4, await atHome.ReadAsync());
    }

    [Fact(Timeout = 60_000)]
    public async Task BecomeHomeAsync_ProgramIsTheHome_CompletesAtOnce()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("home");
        _ = await node.GetAny2AnyInAsync<int>("mine");

        Task becoming = node.BecomeHomeAsync("mine");

        Assert.True(becoming.IsCompletedSuccessfully);
        Assert.Equal(node.Port, (await node.Names!.ResolveRecordAsync("mine", CancellationToken.None)).Port);
    }

    [Fact(Timeout = 60_000)]
    public async Task BecomeHomeAsync_CancelledBeforeTheOffer_NothingMovesAndTheChannelGoesOn()
    {
        const int Total = 3;
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-read-order", "stays", Total.ToString(CultureInfo.InvariantCulture));
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("writer");
        AltingChannelOut<int> output = await node.GetAny2AnyOutAsync<int>("stays");
        using var cancelled = new CancellationTokenSource();
        await cancelled.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => node.BecomeHomeAsync("stays", cancelled.Token));

        Assert.False(HostsHere(node, "stays"));
        Assert.NotEqual(node.Port, (await node.Names!.ResolveRecordAsync("stays", CancellationToken.None)).Port);
        for (int i = 0; i < Total; i++)
        {
            await output.WriteAsync(i);
        }

        await home.WaitForAsync($"done read {Total}");
    }

    private static bool HostsHere(CspNode node, string name) => node.HostedHomes.TryGetValue(name, out Home? _);
}
