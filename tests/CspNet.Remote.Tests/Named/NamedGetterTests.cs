using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.Named;

/// <summary>What the named getters check and refuse, between two programs' nodes in this process.</summary>
public sealed class NamedGetterTests
{
    private const int Timeout = 30_000;

    [Fact(Timeout = Timeout)]
    public async Task GetOne2OneIn_NameHostedByAnotherProgram_ThrowsSayingWhereItLives()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode first = await system.NodeAsync("first");
        CspNode second = await system.NodeAsync("second");
        await first.GetOne2OneInAsync<int>("taken");
        var error = await Assert.ThrowsAsync<NameAlreadyRegisteredException>(async () => await second.GetOne2OneInAsync<int>("taken"));
        Assert.Contains($"127.0.0.1:{first.Port}", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task GetOne2OneOut_WrongValueType_ThrowsAtTheGetterNamingBothTypes()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        await host.GetOne2OneInAsync<int>("ints");
        var error = await Assert.ThrowsAsync<InvalidOperationException>(async () => await user.GetOne2OneOutAsync<string>("ints"));
        Assert.Contains("int32", error.Message, StringComparison.Ordinal);
        Assert.Contains("string", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task GetAny2OneOut_TypeThatCannotCross_ThrowsAtTheGetter()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode user = await system.NodeAsync("user");
        await Assert.ThrowsAsync<NotSupportedException>(async () => await user.GetAny2OneOutAsync<Func<int>>("code"));
    }

    [Fact(Timeout = Timeout)]
    public async Task GetOne2OneOut_SecondWriterProgram_Refused()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode first = await system.NodeAsync("first");
        CspNode second = await system.NodeAsync("second");
        await host.GetOne2OneInAsync<int>("solo");
        await first.GetOne2OneOutAsync<int>("solo");
        var error = await Assert.ThrowsAsync<InvalidOperationException>(async () => await second.GetOne2OneOutAsync<int>("solo"));
        Assert.Contains("already held", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task GetOne2OneOutAsync_NameNotYetCreated_WaitsThenWorks()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        ValueTask<AltingChannelOut<string>> pending = user.GetOne2OneOutAsync<string>("later");
        AltingChannelIn<string> input = await host.GetOne2OneInAsync<string>("later");
        AltingChannelOut<string> output = await pending;
        Task write = output.WriteAsync("hello").AsTask();
        Assert.Equal("hello", await input.ReadAsync());
        await write;
    }

    [Fact(Timeout = Timeout)]
    public async Task GetOne2OneOutAsync_Cancelled_StopsWaitingForTheName()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode user = await system.NodeAsync("user");
        using var cts = new CancellationTokenSource();
        ValueTask<AltingChannelOut<int>> pending = user.GetOne2OneOutAsync<int>("never", cancellationToken: cts.Token);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await pending);
    }

    [Fact(Timeout = Timeout)]
    public async Task Any2Any_EndsInTwoPrograms_FirstAskerHostsAndBothWork()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode a = await system.NodeAsync("a");
        CspNode b = await system.NodeAsync("b");
        AltingChannelOut<int> outA = await a.GetAny2AnyOutAsync<int>("pool");
        AltingChannelIn<int> inB = await b.GetAny2AnyInAsync<int>("pool");
        AltingChannelOut<int> outB = await b.GetAny2AnyOutAsync<int>("pool");
        AltingChannelIn<int> inA = await a.GetAny2AnyInAsync<int>("pool");
        Task w1 = outA.WriteAsync(1).AsTask();
        Assert.Equal(1, await inB.ReadAsync());
        await w1;
        Task w2 = outB.WriteAsync(2).AsTask();
        Assert.Equal(2, await inA.ReadAsync());
        await w2;
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteWrite_Cancelled_EitherDeliveredOnceOrNotAtAll()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelIn<int> input = await host.GetOne2OneInAsync<int>("exact");
        AltingChannelOut<int> output = await user.GetOne2OneOutAsync<int>("exact");
        var delivered = new List<int>();
        for (int i = 0; i < 2_000; i++)
        {
            using var cts = new CancellationTokenSource();
            ValueTask write = output.WriteAsync(i, cts.Token);
            ValueTask<int> read = i % 2 == 0 ? input.ReadAsync() : default;
            cts.Cancel();
            bool written;
            try
            {
                await write;
                written = true;
            }
            catch (OperationCanceledException)
            {
                written = false;
            }

            if (i % 2 == 0)
            {
                // A reader was there: the write either completed (value read) or was cancelled
                // first; then the read is still pending and gets the next write.
                if (written)
                {
                    delivered.Add(await read);
                }
                else
                {
                    Task next = output.WriteAsync(-i).AsTask();
                    Assert.Equal(-i, await read);
                    await next;
                }
            }
            else
            {
                Assert.False(written, "a write with no reader cannot have completed");
            }
        }

        Assert.Equal(delivered.Distinct().Count(), delivered.Count);
        Assert.All(delivered, v => Assert.True(v % 2 == 0));
    }

    [Fact(Timeout = Timeout)]
    public async Task RemoteSharedReadingEnd_InAnAlternative_ChosenWhenItsHomeHasAValue()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host");
        CspNode user = await system.NodeAsync("user");
        AltingChannelOut<int> output = await host.GetOne2AnyOutAsync<int>("fanout");
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("fanout");

        Task write = output.WriteAsync(42).AsTask();
        Assert.Equal(0, await new Alternative([input]).PriSelectAsync());
        Assert.Equal(42, await input.ReadAsync());
        await write;

        // Nothing at the home now: a guard that is ready here wins, and the remote end took nothing.
        Assert.Equal(1, await new Alternative([input, new Skip()]).PriSelectAsync());
        Task again = output.WriteAsync(43).AsTask();
        Assert.Equal(43, await input.ReadAsync());
        await again;
    }
}
