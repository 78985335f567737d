using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Homes;

/// <summary>
/// A channel with an <see cref="OverwriteOldestBuffer{T}"/> whose home leaves moves with the
/// values its buffer holds then (the newest ones, oldest first) and goes on overwriting at its new
/// home with the same capacity (docs/DISTRIBUTED.md, "A moving home").
/// </summary>
public sealed class OverwritingHandoverTests
{
    private const int Slots = 4;

    [Fact(Timeout = 120_000)]
    public async Task Leave_OverwriteOldestBufferHoldsTheNewestValues_TheyMoveAndTheBufferStillOverwrites()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-leave-buffered", "newest", "overwrite", "4");
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>("newest");

        // 0..9 into a buffer of 4 that never blocks its writer: 6..9 are left when the home leaves
        // (its writers' credited values are placed before the buffer moves).
        ChildNode writer = system.Child("write-pause", "Any2Any", "newest", "20", "10");
        await writer.WaitForAsync("paused");
        await HomeHandoverTests.LeaveAsync(home);
        for (int i = 6; i < 10; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        // 10..19 at the new home, unread: once the writer's program has left (its values placed),
        // the buffer holds the newest four, so it was rebuilt with the same capacity and kind.
        writer.CloseInput();
        await writer.WaitForAsync("done wrote 20");
        Assert.Equal(0, await writer.ExitAsync());
        for (int i = 20 - Slots; i < 20; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        using var none = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await input.ReadAsync(none.Token));
    }
}
