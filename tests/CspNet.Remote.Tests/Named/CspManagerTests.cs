using System.Globalization;
using CspNet.NameServer;
using CspNet.Remote.Tests.NameServer;
using Microsoft.Extensions.Hosting;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// The paper's entry points: CspManager.Init/InitStandAlone and Factory's named getters. They use
/// one node per program (a static), so every test of it lives in this class, whose tests xunit
/// runs one at a time; each leaves CspManager shut down.
/// </summary>
public sealed class CspManagerTests(TestRegistryFixture registry) : IClassFixture<TestRegistryFixture>, IAsyncLifetime
{
    public Task InitializeAsync() => CspManager.ShutdownAsync().AsTask();

    public Task DisposeAsync() => CspManager.ShutdownAsync().AsTask();

    [Fact]
    public void NamedGetter_BeforeInit_ThrowsSayingWhatToCall()
    {
        var error = Assert.Throws<InvalidOperationException>(() => Factory.GetOne2OneIn<int>("early"));
        Assert.Contains("CspManager.Init", error.Message, StringComparison.Ordinal);
        Assert.Contains("InitStandAlone", error.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 10_000)]
    public async Task InitStandAlone_FactoryGetters_LocalChannelsFoundByName()
    {
        CspManager.InitStandAlone();
        AltingChannelIn<int> input = Factory.GetOne2OneIn<int>("local");
        AltingChannelOut<int> output = Factory.GetOne2OneOut<int>("local");
        Task write = output.WriteAsync(3).AsTask();
        Assert.Equal(3, await input.ReadAsync());
        await write;
        Assert.False(CspManager.Node.IsDistributed);
    }

    [Fact]
    public void Init_Twice_ThrowsUntilShutdown()
    {
        CspManager.InitStandAlone();
        Assert.Throws<InvalidOperationException>(CspManager.InitStandAlone);
        CspManager.Shutdown();
        CspManager.InitStandAlone();
        Assert.True(CspManager.IsInitialized);
    }

    [Theory]
    [InlineData("port")]
    [InlineData("-1")]
    [InlineData("70000")]
    public void Init_PortThatIsNotAPort_ThrowsArgumentException(string port) =>
        Assert.Throws<ArgumentException>(() => CspManager.Init(port, "9090"));

    [Fact(Timeout = 30_000)]
    public async Task Init_PaperStrings_NamedChannelsAndGettersOfTheFactory()
    {
        await using NameServerHost nameServer = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        CspManager.Init("0", nameServer.Port.ToString(CultureInfo.InvariantCulture));
        Assert.True(CspManager.Node.IsDistributed);
        Assert.NotEqual(0, CspManager.Node.Port);

        // Another program (a second node in this process) writes to the channel this one hosts.
        await using CspNode other = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri });
        AltingChannelIn<long> input = await Factory.GetAny2OneInAsync<long>("totals");
        AltingChannelOut<long> output = await other.GetAny2OneOutAsync<long>("totals");
        Task write = output.WriteAsync(1L << 40).AsTask();
        Assert.Equal(1L << 40, await input.ReadAsync());
        await write;

        // The per-call local option: private to this program, never registered.
        AltingChannelIn<int> mine = Factory.GetOne2OneIn<int>("totals", local: true);
        Assert.NotNull(mine);
    }

    [Fact(Timeout = 30_000)]
    public async Task AddCspNode_CspManagerNode_FactoryGettersUseTheHostedNodeUntilItStops()
    {
        await using NameServerHost nameServer = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        using IHost host = Hosting.CspNodeHostTests.Build(Hosting.CspNodeHostTests.Settings(nameServer, "ambient"), isCspManagerNode: true);
        await host.StartAsync();
        await using CspNode writer = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri });

        AltingChannelIn<int> input = await Factory.GetOne2OneInAsync<int>("ambient-numbers");
        AltingChannelOut<int> output = await writer.GetOne2OneOutAsync<int>("ambient-numbers");
        Task write = output.WriteAsync(7).AsTask();
        int value = await input.ReadAsync();
        await write;
        bool duringRun = CspManager.IsInitialized;
        string label = CspManager.Node.ProgramLabel;
        await host.StopAsync();

        Assert.Equal(7, value);
        Assert.True(duringRun);
        Assert.Equal("ambient", label);
        Assert.False(CspManager.IsInitialized);
    }

    [Fact(Timeout = 30_000)]
    public async Task AddCspNode_CspManagerAlreadyInitialized_StartFailsSayingWhatToDo()
    {
        CspManager.InitStandAlone();
        await using NameServerHost nameServer = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        using IHost host = Hosting.CspNodeHostTests.Build(Hosting.CspNodeHostTests.Settings(nameServer, "second"), isCspManagerNode: true);

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync());

        Assert.Contains("isCspManagerNode: false", error.Message, StringComparison.Ordinal);
        Assert.False(CspManager.Node.IsDistributed);
    }
}
