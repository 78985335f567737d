using CspNet.NameServer;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CspNet.Remote.Tests.NameServer;

public sealed class NameServerServiceCollectionExtensionsTests
{
    [Fact]
    public void AddCspNameServer_Configure_AppliesToTheOptions()
    {
        using ServiceProvider provider = new ServiceCollection().AddLogging()
            .AddCspNameServer(o => o.LeaseTtl = TimeSpan.FromSeconds(3))
            .BuildServiceProvider();

        Assert.Equal(TimeSpan.FromSeconds(3), provider.GetRequiredService<IOptions<NameServerOptions>>().Value.LeaseTtl);
        Assert.IsType<InMemoryNameRegistry>(provider.GetRequiredService<INameRegistry>());
    }

    [Fact]
    public void AddCspNameServer_RegistryRegisteredBefore_KeepsIt()
    {
        using var mine = new InMemoryNameRegistry();
        using ServiceProvider provider = new ServiceCollection().AddLogging()
            .AddSingleton<INameRegistry>(mine)
            .AddCspNameServer()
            .BuildServiceProvider();

        Assert.Same(mine, provider.GetRequiredService<INameRegistry>());
    }

    [Fact]
    public void AddCspNameServer_OptionOutOfRange_ThrowsWhenRead()
    {
        using ServiceProvider provider = new ServiceCollection().AddLogging()
            .AddCspNameServer(o => o.LeaseTtl = TimeSpan.Zero)
            .BuildServiceProvider();

        var e = Assert.ThrowsAny<ArgumentException>(() => provider.GetRequiredService<IOptions<NameServerOptions>>().Value);
        Assert.Contains("LeaseTtl", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task MapCspNameServer_WithoutAddCspNameServer_ThrowsSayingWhatToCall()
    {
        WebApplicationBuilder builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions());
        builder.WebHost.UseKestrelCore();
        builder.Services.AddRouting();
        await using WebApplication app = builder.Build();

        var e = Assert.Throws<InvalidOperationException>(() => app.MapCspNameServer());

        Assert.Contains("AddCspNameServer", e.Message, StringComparison.Ordinal);
    }
}
