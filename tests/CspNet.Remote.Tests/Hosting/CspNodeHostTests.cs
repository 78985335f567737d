using CspNet.NameServer;
using CspNet.Remote.Hosting;
using CspNet.Remote.Tests.NameServer;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace CspNet.Remote.Tests.Hosting;

/// <summary>
/// <c>AddCspNode</c> in a Generic Host built here with in-memory configuration, against a NameServer
/// in this process. The nodes are not CspManager's (isCspManagerNode: false), so these tests run
/// beside the others; the CspManager case is in CspManagerTests.
/// </summary>
public sealed class CspNodeHostTests(TestRegistryFixture registry) : IClassFixture<TestRegistryFixture>
{
    private const int Timeout = 30_000;

    [Fact(Timeout = Timeout)]
    public async Task AddCspNode_TwoHostsFromConfiguration_NamedChannelCarriesValuesAndStopsCleanly()
    {
        await using NameServerHost names = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        using IHost reader = Build(Settings(names, "reader"));
        using IHost writer = Build(Settings(names, "writer"));
        await reader.StartAsync();
        await writer.StartAsync();

        CspNode readerNode = reader.Services.GetRequiredService<CspNode>();
        CspNode writerNode = await writer.Services.GetRequiredService<CspNodeHost>().GetNodeAsync();
        AltingChannelIn<int> input = await readerNode.GetOne2OneInAsync<int>("hosted-numbers");
        AltingChannelOut<int> output = await writerNode.GetOne2OneOutAsync<int>("hosted-numbers");
        Task write = output.WriteAsync(42).AsTask();
        int value = await input.ReadAsync();
        await write;
        await writer.StopAsync();
        await reader.StopAsync();

        Assert.Equal(42, value);
        Assert.True(readerNode.IsDistributed);
        Assert.Equal("reader", readerNode.ProgramLabel);
        Assert.Throws<InvalidOperationException>(() => reader.Services.GetRequiredService<CspNodeHost>().Node);
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await readerNode.GetOne2OneInAsync<int>("after-stop"));

        // Stopping ended the reader's lease: the name is free for a new host of the channel.
        await using CspNode next = await CspNode.StartAsync(new CspNodeOptions { NameServer = names.Uri });
        await next.GetOne2OneInAsync<int>("hosted-numbers");
    }

    [Theory(Timeout = Timeout)]
    [InlineData("Address", "example.org", "must be an IP address")]
    [InlineData("Address", "10.1.2.3", "ClusterKey")]
    [InlineData("ChunkSize", "10", "ChunkSize must be between")]
    public async Task AddCspNode_BadConfiguration_StartFailsNamingTheSectionAndWhatToChange(string key, string value, string expected)
    {
        using IHost host = Build(new Dictionary<string, string?>
        {
            ["CspNet:Node:NameServer"] = "http://127.0.0.1:1",
            ["CspNet:Node:" + key] = value,
        });

        var error = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());

        Assert.Contains("'CspNet:Node'", error.Message, StringComparison.Ordinal);
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(() => host.Services.GetRequiredService<CspNodeHost>().Node);
    }

    [Fact]
    public void AddCspNode_Configure_AppliesAfterConfiguration()
    {
        using IHost host = Build(
            new Dictionary<string, string?> { ["CspNet:Node:Port"] = "7001", ["CspNet:Node:PeerTimeout"] = "00:00:03" },
            o => o.Port = 7002);

        CspNodeOptions options = host.Services.GetRequiredService<IOptions<CspNodeOptions>>().Value;

        Assert.Equal(7002, options.Port);
        Assert.Equal(TimeSpan.FromSeconds(3), options.PeerTimeout);
        Assert.NotNull(host.Services.GetRequiredService<CSPThreadPool>());
    }

    internal static IHost Build(Dictionary<string, string?> settings, Action<CspNodeOptions>? configure = null, bool isCspManagerNode = false)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Services.AddCspNode(configure, isCspManagerNode);
        return builder.Build();
    }

    internal static Dictionary<string, string?> Settings(NameServerHost names, string label) => new()
    {
        ["CspNet:Node:NameServer"] = names.Uri.ToString(),
        ["CspNet:Node:ProgramLabel"] = label,
        ["CspNet:Node:PeerTimeout"] = "00:00:02",
    };
}
