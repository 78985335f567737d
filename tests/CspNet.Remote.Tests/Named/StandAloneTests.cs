using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.Named;

/// <summary>Named constructs in a stand-alone node: ordinary local ones, found by name, no network.</summary>
public sealed class StandAloneTests
{
    [Fact(Timeout = 10_000)]
    public async Task GetOne2OneInThenOut_StandAlone_EndsOfOneLocalChannel()
    {
        await using CspNode node = CspNode.CreateStandAlone();
        AltingChannelIn<int> input = node.GetOne2OneIn<int>("c");
        AltingChannelOut<int> output = node.GetOne2OneOut<int>("c");
        ValueTask write = output.WriteAsync(42);
        Assert.Equal(42, await input.ReadAsync());
        await write;
        Assert.False(node.IsDistributed);
        Assert.Equal(0, node.Port);
    }

    [Fact(Timeout = 10_000)]
    public async Task GetOne2OneOutAsync_BeforeTheReaderCreatesIt_WaitsForTheChannel()
    {
        await using CspNode node = CspNode.CreateStandAlone();
        ValueTask<AltingChannelOut<int>> pending = node.GetOne2OneOutAsync<int>("later");
        Assert.False(pending.IsCompleted);
        AltingChannelIn<int> input = node.GetOne2OneIn<int>("later");
        AltingChannelOut<int> output = await pending;
        ValueTask write = output.WriteAsync(7);
        Assert.Equal(7, await input.ReadAsync());
        await write;
    }

    [Fact(Timeout = 10_000)]
    public async Task Getters_StandAlone_NeedNoSerializer()
    {
        // A delegate can never cross between programs; stand-alone channels never serialize.
        await using CspNode node = CspNode.CreateStandAlone();
        AltingChannelIn<Func<int>> input = node.GetAny2OneIn<Func<int>>("code");
        AltingChannelOut<Func<int>> output = node.GetAny2OneOut<Func<int>>("code");
        ValueTask write = output.WriteAsync(() => 5);
        Assert.Equal(5, (await input.ReadAsync())());
        await write;
    }

    [Fact(Timeout = 10_000)]
    public async Task GetOne2OneIn_NameTakenTwice_ThrowsSayingItExists()
    {
        await using CspNode node = CspNode.CreateStandAlone();
        node.GetOne2OneIn<int>("once");
        var error = Assert.Throws<NameAlreadyRegisteredException>(() => node.GetOne2OneIn<int>("once"));
        Assert.Contains("already exists", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 10_000)]
    public async Task GetOne2OneOut_WrongTypeOrKind_ThrowsNamingBoth()
    {
        await using CspNode node = CspNode.CreateStandAlone();
        node.GetOne2OneIn<int>("typed");
        var wrongType = Assert.Throws<InvalidOperationException>(() => node.GetOne2OneOut<string>("typed"));
        Assert.Contains("System.Int32", wrongType.Message, StringComparison.Ordinal);
        var wrongKind = Assert.Throws<InvalidOperationException>(() => node.GetAny2OneOut<int>("typed"));
        Assert.Contains("One2One", wrongKind.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 10_000)]
    public async Task GetOne2OneOut_SecondWriterOfOne2One_Refused()
    {
        await using CspNode node = CspNode.CreateStandAlone();
        node.GetOne2OneIn<int>("single");
        node.GetOne2OneOut<int>("single");
        Assert.Throws<InvalidOperationException>(() => node.GetOne2OneOut<int>("single"));
    }

    [Fact(Timeout = 10_000)]
    public async Task NamedBarrierAndBucket_StandAlone_WorkLocally()
    {
        await using CspNode node = CspNode.CreateStandAlone();
        NamedBarrier created = node.GetBarrier("b", enrolled: 2);
        NamedBarrier joined = node.GetBarrier("b");
        ValueTask first = created.SyncAsync();
        await joined.SyncAsync();
        await first;

        NamedBucket bucket = node.GetBucket("k");
        ValueTask fall = node.GetBucket("k").FallAsync();
        Assert.Equal(1, bucket.Flush());
        await fall;
    }

    [Theory(Timeout = 10_000)]
    [InlineData("")]
    [InlineData("bad\nname")]
    public async Task Getter_InvalidName_ThrowsArgumentException(string name)
    {
        await using CspNode node = CspNode.CreateStandAlone();
        Assert.ThrowsAny<ArgumentException>(() => node.GetOne2OneIn<int>(name));
    }
}
