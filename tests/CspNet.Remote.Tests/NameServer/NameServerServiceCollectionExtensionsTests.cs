using CspNet.NameServer;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// How the NameServer's services compose. These build a service provider and start no NameServer,
/// so they do not run per registry: the in-memory registry is what <c>AddCspNameServer</c> adds
/// unless another is registered, and <c>AddCspEtcdNameRegistry</c> replaces it in either order.
/// </summary>
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

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void AddCspEtcdNameRegistry_BeforeOrAfterAddCspNameServer_IsTheRegistry(bool etcdFirst)
    {
        var services = new ServiceCollection().AddLogging();
        if (etcdFirst)
        {
            services.AddCspEtcdNameRegistry();
        }

        services.AddCspNameServer();
        if (!etcdFirst)
        {
            services.AddCspEtcdNameRegistry();
        }

        // The registry connects at its first call: building it needs no etcd.
        using ServiceProvider provider = services.BuildServiceProvider();

        Assert.IsType<CspNet.NameServer.Etcd.EtcdNameRegistry>(provider.GetRequiredService<INameRegistry>());
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
