using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CspNet.Tests.Hosting;

/// <summary>
/// <c>AddCspNet</c> with the plain container and in-memory configuration; the startup validator is
/// what the Generic Host runs before it starts anything.
/// </summary>
public sealed class CspNetServiceCollectionExtensionsTests
{
    [Fact]
    public void AddCspNet_ConfigurationSection_PoolGetsTheStackSize()
    {
        using ServiceProvider provider = Provider(new() { ["CspNet:MaxStackSize"] = "262144" });

        CSPThreadPool pool = provider.GetRequiredService<CSPThreadPool>();

        Assert.Equal(262_144, pool.MaxStackSize);
        Assert.NotSame(CSPThreadPool.Default, pool);
        Assert.Same(pool, provider.GetRequiredService<CSPThreadPool>());
    }

    [Fact]
    public void AddCspNet_NoConfigurationRegistered_DefaultsAndConfigureApply()
    {
        using ServiceProvider provider = new ServiceCollection().AddCspNet(o => o.MaxStackSize = 1 << 20).BuildServiceProvider();

        Assert.Equal(1 << 20, provider.GetRequiredService<CSPThreadPool>().MaxStackSize);
    }

    [Fact]
    public void AddCspNet_NegativeStackSize_StartupValidationNamesTheKey()
    {
        using ServiceProvider provider = Provider(new() { ["CspNet:MaxStackSize"] = "-1" });

        var error = Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<IStartupValidator>().Validate());

        Assert.Contains("CspNet:MaxStackSize", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AddCspNet_ContainerDisposed_PoolDisposedWithIt()
    {
        ServiceProvider provider = Provider([]);
        CSPThreadPool pool = provider.GetRequiredService<CSPThreadPool>();

        provider.Dispose();

        Assert.Throws<ObjectDisposedException>(() => new Parallel(new ICSPProcess[] { new Processes.ActionProcess(static () => { }) }) { ThreadPool = pool }.Run());
    }

    private static ServiceProvider Provider(Dictionary<string, string?> settings)
    {
        IConfiguration configuration = new ConfigurationBuilder().AddInMemoryCollection(settings).Build();
        return new ServiceCollection().AddSingleton(configuration).AddCspNet().BuildServiceProvider();
    }
}
