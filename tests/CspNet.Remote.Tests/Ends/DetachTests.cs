using CspNet.Remote.Tests.Link;
using CspNet.Remote.Tests.Named;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Ends;

/// <summary>
/// Detaching one end of a channel that another program hosts (<see cref="CspNode.DetachAsync{T}(IChannelOut{T}, CancellationToken)"/>)
/// while the program goes on: unused write credits go back to the buffer, a single writing end can
/// be taken by another program, what a waiting operation or selection had at the home goes back,
/// and later use of the end throws <see cref="ObjectDisposedException"/>.
/// </summary>
public sealed class DetachTests
{
    private const int Timeout = 60_000;
    private const int Sentinel = -1;

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_WriterHoldsUnusedCredits_AnotherWriterFillsTheBuffer()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode first = await system.NodeAsync("first");
        CspNode second = await system.NodeAsync("second");
        AltingChannelIn<int> input = await home.GetAny2OneInAsync("credits", new FifoBuffer<int>(4));
        AltingChannelIn<int> probeIn = await home.GetAny2OneInAsync<int>("credits-probe");
        AltingChannelOut<int> firstOut = await first.GetAny2OneOutAsync<int>("credits");
        AltingChannelOut<int> secondOut = await second.GetAny2OneOutAsync<int>("credits");
        AltingChannelOut<int> secondProbe = await second.GetAny2OneOutAsync<int>("credits-probe");

        // The first writer's write starts its credits: the three free slots are reserved for it.
        await firstOut.WriteAsync(0);
        Task waiting = await AssertWaitsAtTheHomeAsync(secondOut.WriteAsync(1), probeIn, secondProbe);

        await first.DetachAsync(firstOut);

        // Its three slots are the channel's again: the second writer fills them, and no more.
        await waiting;
        await secondOut.WriteAsync(2);
        await secondOut.WriteAsync(3);
        Task fifth = await AssertWaitsAtTheHomeAsync(secondOut.WriteAsync(4), probeIn, secondProbe);
        for (int i = 0; i <= 4; i++)
        {
            Assert.Equal(i, await input.ReadAsync());
        }

        await fifth;
    }

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_One2OneWriter_AnotherProgramTakesTheWritingEnd()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode first = await system.NodeAsync("first");
        CspNode second = await system.NodeAsync("second");
        AltingChannelIn<int> input = await home.GetOne2OneInAsync<int>("single");
        AltingChannelOut<int> firstOut = await first.GetOne2OneOutAsync<int>("single");

        // Held: another program is refused.
        InvalidOperationException held = await Assert.ThrowsAsync<InvalidOperationException>(async () => await second.GetOne2OneOutAsync<int>("single"));
        Assert.Contains("already held", held.Message, StringComparison.Ordinal);

        Task write = firstOut.WriteAsync(1).AsTask();
        Assert.Equal(1, await input.ReadAsync());
        await write;
        await first.DetachAsync(firstOut);

        AltingChannelOut<int> secondOut = await second.GetOne2OneOutAsync<int>("single");
        write = secondOut.WriteAsync(2).AsTask();
        Assert.Equal(2, await input.ReadAsync());
        await write;
    }

    [Fact(Timeout = 120_000)]
    public async Task DetachAsync_AttachCyclesAcrossTwoPrograms_TenThousandValuesOnceInOrder()
    {
        const int Cycles = 100;
        const int PerCycle = 100;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode[] writers = [await system.NodeAsync("a"), await system.NodeAsync("b")];
        AltingChannelIn<int> input = await home.GetOne2OneInAsync("cycles", new FifoBuffer<int>(8));

        Task writing = Task.Run(async () =>
        {
            for (int cycle = 0; cycle < Cycles; cycle++)
            {
                CspNode node = writers[cycle % 2];
                AltingChannelOut<int> output = await node.GetOne2OneOutAsync<int>("cycles");
                for (int i = 0; i < PerCycle; i++)
                {
                    await output.WriteAsync((cycle * PerCycle) + i);
                }

                await node.DetachAsync(output);
            }
        });

        for (int expected = 0; expected < Cycles * PerCycle; expected++)
        {
            Assert.Equal(expected, await input.ReadAsync());
        }

        await writing;

        // Nothing was delivered twice: a last writer's sentinel is the next value.
        AltingChannelOut<int> last = await writers[0].GetOne2OneOutAsync<int>("cycles");
        await AssertNextIsSentinelAsync(input, last);
    }

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_Detached_LaterUseThrowsObjectDisposedSayingWhatToDo()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode user = await system.NodeAsync("user");
        _ = await home.GetAny2OneInAsync<int>("used");
        _ = await home.GetOne2AnyOutAsync<int>("read");
        AltingChannelOut<int> output = await user.GetAny2OneOutAsync<int>("used");
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("read");
        await user.DetachAsync(output);
        await user.DetachAsync(input);
        await user.DetachAsync(output); // twice: nothing more

        ObjectDisposedException write = await Assert.ThrowsAsync<ObjectDisposedException>(async () => await output.WriteAsync(1));
        Assert.Contains("'used'", write.Message, StringComparison.Ordinal);
        Assert.Contains("getter", write.Message, StringComparison.Ordinal);
        Assert.Throws<ObjectDisposedException>(() => output.Write(1));
        Assert.Throws<ObjectDisposedException>(output.Poison);
        Assert.Throws<ObjectDisposedException>(() => output.Offer(1));
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await input.ReadAsync());
        Assert.Throws<ObjectDisposedException>(input.Poison);
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await new Alternative([input]).SelectAsync());

        // An end of a channel this program hosts is not detached: it lives with the channel.
        AltingChannelIn<int> hosted = await user.GetAny2OneInAsync<int>("hosted-here");
        ArgumentException local = await Assert.ThrowsAsync<ArgumentException>(() => user.DetachAsync(hosted));
        Assert.Contains("hosted by another program", local.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_PlainWriteAndReadWaiting_BothThrowAndNothingMoves()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<int> atHome = await home.GetAny2OneInAsync<int>("waits");
        AltingChannelOut<int> localWriter = await home.GetAny2OneOutAsync<int>("waits");
        AltingChannelOut<int> oneToAny = await home.GetOne2AnyOutAsync<int>("waits-back");
        AltingChannelOut<int> output = await user.GetAny2OneOutAsync<int>("waits");
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("waits-back");
        AltingChannelIn<int> otherReader = await (await system.NodeAsync("other")).GetOne2AnyInAsync<int>("waits-back");

        // Nobody reads or writes at the home: both wait there until the ends detach.
        Task write = output.WriteAsync(5).AsTask();
        Task<int> read = input.ReadAsync().AsTask();
        await user.DetachAsync(output);
        await user.DetachAsync(input);
        ObjectDisposedException writeFailed = await Assert.ThrowsAsync<ObjectDisposedException>(() => write);
        Assert.Contains("nothing was written", writeFailed.Message, StringComparison.Ordinal);
        ObjectDisposedException readFailed = await Assert.ThrowsAsync<ObjectDisposedException>(() => read);
        Assert.Contains("nothing was taken", readFailed.Message, StringComparison.Ordinal);

        // The write delivered nothing, and the next value goes to the reader still attached.
        await AssertNextIsSentinelAsync(atHome, localWriter);
        Task written = oneToAny.WriteAsync(6).AsTask();
        Assert.Equal(6, await otherReader.ReadAsync());
        await written;
    }

    [Theory(Timeout = Timeout)]
    [InlineData(0)]
    [InlineData(2)]
    public async Task DetachAsync_SelectionWaitingOnTheEnd_SelectionThrowsAndTheHomeKeepsNothingOfIt(int capacity)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode user = await system.NodeAsync("user");
        IBuffer<int>? buffer = capacity == 0 ? null : new FifoBuffer<int>(capacity);
        AltingChannelIn<int> atHome = await home.GetAny2AnyInAsync("selects", buffer);
        AltingChannelOut<int> localWriter = await home.GetAny2AnyOutAsync<int>("selects");
        AltingChannelOut<int> output = await user.GetAny2AnyOutAsync<int>("selects");
        AltingChannelIn<int> input = await user.GetAny2AnyInAsync<int>("selects");

        // Fill the buffer, so that the offer waits for room at the home.
        for (int i = 0; i < capacity; i++)
        {
            await localWriter.WriteAsync(100 + i);
        }

        // The offer waits at the home (a watch, then a reservation waiting for room or a reader).
        output.Offer(7);
        Task<int> offering = new Alternative([output]).SelectAsync().AsTask();
        await user.DetachAsync(output);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => offering);
        Assert.True(output.HasOffer);
        for (int i = 0; i < capacity; i++)
        {
            Assert.Equal(100 + i, await atHome.ReadAsync());
        }

        await AssertNextIsSentinelAsync(atHome, localWriter);

        // A reading end's selection waits for a value; detached, the value goes to the reader that stays.
        Task<int> selecting = new Alternative([input]).SelectAsync().AsTask();
        await user.DetachAsync(input);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => selecting);
        await AssertNextIsSentinelAsync(atHome, localWriter);
    }

    [Theory(Timeout = Timeout)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    [InlineData(false, false)]
    public async Task Detach_OperationsWaitingOnTheEnd_HomeAnswersThemCancelledAndHoldsNothing(bool reader, bool read)
    {
        // Frame by frame, so that the home's answers are seen: the client's own end fails its
        // waiting selection locally and would never notice an operation the home kept running.
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => o.MaxOperationsPerLink = 1);
        AltingChannelIn<int> atHome = await home.GetAny2AnyInAsync<int>("waits");
        AltingChannelOut<int> localWriter = await home.GetAny2AnyOutAsync<int>("waits");
        await using var client = await LinkBoundsTests.RawClient.ConnectAsync(home);

        for (uint handle = 1; handle <= 3; handle++)
        {
            await client.AttachAsync(handle, "waits", "Any2Any", "int32", reader ? Proto.Role.Reader : Proto.Role.Writer);
            ulong waiting = handle * 10;
            await client.SendAsync(read
                ? new Proto.ClientFrame { Read = new Proto.Read { Handle = handle, OpId = waiting } }
                : new Proto.ClientFrame { Watch = new Proto.Watch { Handle = handle, OpId = waiting } });
            await client.SendAsync(new Proto.ClientFrame { Detach = new Proto.Detach { Handle = handle, OpId = waiting + 1 } });

            // Both are answered: the waiting operation as cancelled (it took nothing), the detach as
            // done. An operation left running would also hold the stream's only operation slot, so
            // the next round's would be refused.
            var answers = new List<(ulong, Proto.Outcome)>();
            for (int i = 0; i < 2; i++)
            {
                Proto.Completed completed = await client.NextCompletedAsync().WaitAsync(TimeSpan.FromSeconds(20));
                answers.Add((completed.OpId, completed.Outcome));
            }

            Assert.Equal([(waiting, Proto.Outcome.Cancelled), (waiting + 1, Proto.Outcome.Ok)], answers.Order());
        }

        // Nothing of the detached ends is left at the home: the home's own reader and writer meet.
        await AssertNextIsSentinelAsync(atHome, localWriter);
    }

    [Fact(Timeout = Timeout)]
    public async Task DetachAsync_SelectionChoseAValueNotReadYet_RefusesUntilTheValueIsRead()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode user = await system.NodeAsync("user");
        AltingChannelOut<int> output = await home.GetOne2AnyOutAsync<int>("chosen");
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("chosen");

        Task write = output.WriteAsync(5).AsTask();
        Assert.Equal(0, await new Alternative([input]).SelectAsync());

        // The selection took the value at the home: detaching now would drop it.
        InvalidOperationException refused = await Assert.ThrowsAsync<InvalidOperationException>(() => user.DetachAsync(input));
        Assert.Contains("read it", refused.Message, StringComparison.Ordinal);
        Assert.Equal(5, await input.ReadAsync());
        await write;
        await user.DetachAsync(input);
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await input.ReadAsync());
    }

    /// <summary>Whether <paramref name="input"/> holds nothing from a detached end: a local writer's sentinel is the next value read.</summary>
    private static async Task AssertNextIsSentinelAsync(AltingChannelIn<int> input, AltingChannelOut<int> local)
    {
        Task write = local.WriteAsync(Sentinel).AsTask();
        Assert.Equal(Sentinel, await input.ReadAsync());
        await write;
    }

    /// <summary>
    /// Asserts that <paramref name="write"/> has reached the home and waits there: the probe travels
    /// the same link behind it, so once the home has read the probe it has handled the write.
    /// </summary>
    private static async Task<Task> AssertWaitsAtTheHomeAsync(ValueTask write, AltingChannelIn<int> probeIn, AltingChannelOut<int> probeOut)
    {
        Task waiting = write.AsTask();
        Task probe = probeOut.WriteAsync(0).AsTask();
        Assert.Equal(0, await probeIn.ReadAsync());
        await probe;
        Assert.False(waiting.IsCompleted);
        return waiting;
    }
}
