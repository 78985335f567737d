using System.Globalization;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Homes;

/// <summary>
/// A program that leaves cleanly while it hosts an unbuffered Any2Any channel that other programs
/// hold ends of hands the channel's home to one of them (docs/DISTRIBUTED.md, "A moving home"):
/// the home is a separate program (tests/CspNet.Remote.TestNode, scenario home-leave), and every
/// operation waiting at it while it leaves completes at the new home, exactly once.
/// </summary>
public sealed class HomeHandoverTests
{
    private const int Count = 10_000;
    private static readonly string CountText = Count.ToString(CultureInfo.InvariantCulture);

    [Fact(Timeout = 120_000)]
    public async Task Leave_ReaderProgramWaitsAtTheHome_EveryValueOnceInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = await HomeAsync(system, "flow");
        CspNode node = await system.NodeAsync("writer");
        AltingChannelOut<int> output = await node.GetAny2AnyOutAsync<int>("flow");
        ChildNode reader = system.Child("read-order", "Any2Any", "flow", CountText);
        await reader.ReadyAsync();
        for (int i = 0; i < Count / 2; i++)
        {
            await output.WriteAsync(i);
        }

        // The reader's next read waits at the home while the home leaves; this end is idle.
        await LeaveAsync(home);
        for (int i = Count / 2; i < Count; i++)
        {
            await output.WriteAsync(i);
        }

        await reader.WaitForAsync($"done read {CountText}");
        Assert.Equal(0, await reader.ExitAsync());
    }

    [Fact(Timeout = 120_000)]
    public async Task Leave_WriterProgramWaitsAtTheHome_EveryValueOnceInOrder()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = await HomeAsync(system, "flow");
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("flow");
        ChildNode writer = system.Child("write", "Any2Any", "flow", CountText);
        for (int i = 0; i < Count / 2; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        // The writer's next write waits at the home (nothing reads) while the home leaves.
        await LeaveAsync(home);
        for (int i = Count / 2; i < Count; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        await writer.WaitForAsync($"done wrote {CountText}");
        Assert.Equal(0, await writer.ExitAsync());
    }

    [Fact(Timeout = 120_000)]
    public async Task Leave_SelectionAndCancelledReadWaitAtTheHome_SelectionGetsTheNextValueAndTheCancelledReadNothing()
    {
        const int Total = 2_000;
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = await HomeAsync(system, "choices");
        CspNode node = await system.NodeAsync("selector");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("choices");
        AltingChannelIn<int> other = await node.GetAny2AnyInAsync<int>("choices");
        ChildNode writer = system.Child("write-pause", "Any2Any", "choices", Total.ToString(CultureInfo.InvariantCulture), (Total / 2).ToString(CultureInfo.InvariantCulture));
        var alternative = new Alternative([input]);
        for (int i = 0; i < Total / 2; i++)
        {
            Assert.Equal(0, await alternative.PriSelectAsync());
            Assert.Equal(i, await input.ReadAsync());
        }

        await writer.WaitForAsync("paused");

        // Both wait at the home while it leaves: the selection for the next value, and a read that
        // is cancelled once it waits at the new home.
        Task<int> selecting = alternative.PriSelectAsync().AsTask();
        using var cancel = new CancellationTokenSource();
        Task<int> cancelled = other.ReadAsync(cancel.Token).AsTask();
        await LeaveAsync(home);
        Assert.False(cancelled.IsCompleted, "the read ended when its home left");
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled);
        Assert.False(selecting.IsCompleted, "the selection ended before any value was written");

        writer.CloseInput();
        Assert.Equal(0, await selecting);
        Assert.Equal(Total / 2, await input.ReadAsync());
        for (int i = Total / 2 + 1; i < Total; i++)
        {
            Assert.Equal(0, await alternative.PriSelectAsync());
            Assert.Equal(i, await input.ReadAsync());
        }

        await writer.WaitForAsync($"done wrote {Total}");
    }

    [Fact(Timeout = 60_000)]
    public async Task Leave_PoisonedChannel_MovesPoisoned()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = await HomeAsync(system, "sick");
        CspNode node = await system.NodeAsync("poisoner");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("sick");
        input.Poison();
        var poisoned = await Assert.ThrowsAsync<PoisonException>(async () => await input.ReadAsync());

        await LeaveAsync(home);

        // Answered by the new home, which came poisoned: not a lost program, not a channel poisoned for want of a taker.
        var moved = await Assert.ThrowsAsync<PoisonException>(async () => await input.ReadAsync());
        Assert.Equal(poisoned.Message, moved.Message);
    }

    /// <summary>A program that hosts the Any2Any channel <paramref name="name"/> and leaves when told (<see cref="LeaveAsync"/>).</summary>
    private static async Task<ChildNode> HomeAsync(TestSystem system, string name)
    {
        ChildNode home = system.Child("home-leave", "Any2Any", name);
        await home.ReadyAsync();
        return home;
    }

    /// <summary>The home program leaves cleanly (CspNode.DisposeAsync) and exits.</summary>
    internal static async Task LeaveAsync(ChildNode home)
    {
        home.CloseInput();
        await home.WaitForAsync("done left");
        Assert.Equal(0, await home.ExitAsync());
    }
}
