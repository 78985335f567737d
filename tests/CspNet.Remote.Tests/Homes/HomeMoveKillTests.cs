using CspNet.Remote.Internal.Client;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Homes;

/// <summary>
/// A program killed in the middle of a move of a channel's home (docs/DISTRIBUTED.md, "A moving
/// home"): the taker while it receives a leaving home's buffer, the old home while a live move's
/// taker waits, the taker after it asked. Every other end gets a clear outcome (the channel goes
/// on, or fails saying why), nothing is read twice, and no call hangs. The killed programs are
/// separate processes (tests/CspNet.Remote.TestNode), killed, not closed.
/// </summary>
public sealed class HomeMoveKillTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    [Fact(Timeout = 120_000)]
    public async Task Leave_TakerKilledWhileReceivingTheBuffer_EveryOtherEndFailsWithThePoisonAndReadsNothing()
    {
        const string Name = "killed-taker";
        const int Count = 10_000;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        await home.GetAny2AnyInAsync(Name, new InfiniteBuffer<int>());
        CspNode node = await system.NodeAsync("user");
        node.TakesHomes = false; // the only program that would take the home is the one killed
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>(Name);
        AltingChannelOut<int> output = await node.GetAny2AnyOutAsync<int>(Name);
        for (int i = 0; i < Count; i++)
        {
            await output.WriteAsync(i);
        }

        ChildNode taker = system.Child("stuck-taker", Name, (Count / 2).ToString(System.Globalization.CultureInfo.InvariantCulture));
        await taker.ReadyAsync();

        Task leaving = home.DisposeAsync().AsTask();
        await taker.WaitForAsync("receiving").WaitAsync(Bound);
        await taker.KillAsync();
        await leaving.WaitAsync(Bound);

        // The values left with the home: no end reads one of them, and each learns why.
        PoisonException read = await Assert.ThrowsAsync<PoisonException>(async () => await input.ReadAsync()).WaitAsync(Bound);
        PoisonException written = await Assert.ThrowsAsync<PoisonException>(async () => await output.WriteAsync(-1)).WaitAsync(Bound);
        foreach (PoisonException poisoned in new[] { read, written })
        {
            Assert.Contains($"'{Name}'", poisoned.Message, StringComparison.Ordinal);
            Assert.Contains("no program holding its ends took it over", poisoned.Message, StringComparison.Ordinal);
        }
    }

    [Fact(Timeout = 120_000)]
    public async Task BecomeHome_OldHomeKilledAfterItOffered_CallFailsWithPeerLostAndTheTakerKeepsNoCopy()
    {
        const string Name = "killed-home";
        await using TestSystem system = await TestSystem.StartAsync();
        ChildNode home = system.Child("home-leave", "Any2Any", Name);
        await home.ReadyAsync();
        CspNode node = await system.NodeAsync("taker");
        AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>(Name);
        var offered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var taking = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var settled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        HandoverValues.DelayedTakeForTests[Name] = () =>
        {
            offered.TrySetResult();
            return taking.Task;
        };
        PeerLink.TakeSettledForTests[Name] = () => settled.TrySetResult();
        try
        {
            Task becoming = node.BecomeHomeAsync(Name);
            await offered.Task.WaitAsync(Bound);
            await home.KillAsync();
            taking.SetResult();

            PeerLostException lost = await Assert.ThrowsAsync<PeerLostException>(() => becoming).WaitAsync(Bound);
            Assert.Contains($"'{Name}'", lost.Message, StringComparison.Ordinal);

            // The taker installed the channel after its old home died, which therefore never moved
            // the name: the taker drops its copy, so that its own getters do not hand it out.
            await settled.Task.WaitAsync(Bound);
            Assert.False(node.HostedHomes.TryGetValue(Name, out _), "The taker kept a copy of a channel whose name never moved to it.");
        }
        finally
        {
            taking.TrySetResult();
            HandoverValues.DelayedTakeForTests.TryRemove(Name, out _);
            PeerLink.TakeSettledForTests.TryRemove(Name, out _);
        }

        // The name never moved: the end's next operation fails as on any lost home, it does not hang.
        await Assert.ThrowsAsync<PeerLostException>(async () => await input.ReadAsync()).WaitAsync(Bound);
    }

    [Theory(Timeout = 120_000)]
    [InlineData("asking")]
    [InlineData("offered")]
    public async Task BecomeHome_TakerKilledAfterAsking_TheHomeStaysAndEveryEndGoesOn(string killedWhen)
    {
        string name = $"killed-asker-{killedWhen}";
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelOut<int> output = await home.GetAny2AnyOutAsync<int>(name);
        CspNode other = await system.NodeAsync("other");
        AltingChannelIn<int> input = await other.GetAny2AnyInAsync<int>(name);
        ChildNode taker = system.Child("become-home-stuck", name);
        await taker.ReadyAsync();

        // A read waits at the home while the move begins: it is held, and goes on wherever the channel is.
        Task<int> waiting = input.ReadAsync().AsTask();
        await taker.WriteLineAsync("go");
        await taker.WaitForAsync(killedWhen).WaitAsync(Bound);
        await taker.KillAsync();

        await output.WriteAsync(1).AsTask().WaitAsync(Bound);
        Assert.Equal(1, await waiting.WaitAsync(Bound));
        Task<int> next = input.ReadAsync().AsTask();
        await output.WriteAsync(2).AsTask().WaitAsync(Bound);
        Assert.Equal(2, await next.WaitAsync(Bound));
    }
}
