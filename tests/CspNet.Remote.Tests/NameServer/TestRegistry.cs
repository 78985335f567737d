using CspNet.NameServer;
using Microsoft.Extensions.DependencyInjection;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// Where the NameServers that tests start keep their table: in memory (the default), or in etcd.
/// The NameServer test classes run on both (an in-memory and an etcd class each); the NameServer of
/// the shared fixtures (<c>TestSystem</c>, <c>PoolSystem</c>) is on etcd when the run says so:
/// <c>CSPNET_TEST_REGISTRY=etcd dotnet test tests/CspNet.Remote.Tests</c>.
/// </summary>
internal static class TestRegistry
{
    internal const string Variable = "CSPNET_TEST_REGISTRY";

    // One etcd for the whole run: starting one per test would dominate the suite's time.
    private static readonly Lazy<Task<EtcdProcess>> RunEtcd = new(StartRunEtcdAsync);

    /// <summary>Whether this run puts the shared fixtures' NameServer on etcd (<c>CSPNET_TEST_REGISTRY=etcd</c>).</summary>
    internal static bool OnEtcd =>
        Environment.GetEnvironmentVariable(Variable) switch
        {
            null or "" or "memory" => false,
            "etcd" => true,
            string other => throw new InvalidOperationException($"{Variable}={other} is not a registry the tests know: use 'etcd', or 'memory' (the default)."),
        };

    /// <summary>Puts the host's table in <paramref name="etcd"/> under a prefix of its own, so it starts empty and no other test sees its names.</summary>
    internal static NameServerHostOptions UseEtcd(this NameServerHostOptions options, EtcdProcess etcd)
    {
        string prefix = EtcdNameRegistryTests.NewPrefix();
        options.ConfigureServices = services => services.AddCspEtcdNameRegistry(o =>
        {
            o.Endpoints = etcd.ClientUrl;
            o.Prefix = prefix;
        });
        return options;
    }

    /// <summary>The options as given (in memory), or on the run's etcd under a new prefix when <see cref="OnEtcd"/>.</summary>
    internal static async Task<NameServerHostOptions> ForThisRunAsync(this NameServerHostOptions options) =>
        OnEtcd ? options.UseEtcd(await RunEtcd.Value) : options;

    private static async Task<EtcdProcess> StartRunEtcdAsync()
    {
        if (EtcdProcess.SkipReason is { } missing)
        {
            throw new InvalidOperationException($"{Variable}=etcd needs etcd: {missing}");
        }

        EtcdProcess etcd = await EtcdProcess.StartAsync();

        // xunit 2 has no fixture for the whole assembly: the run's etcd goes when the test process
        // exits, or with the test process's end of its standard input when the test host is killed.
        AppDomain.CurrentDomain.ProcessExit += (_, _) => etcd.DisposeAsync().AsTask().GetAwaiter().GetResult();
        return etcd;
    }
}

/// <summary>
/// The registry of the NameServers a test class starts itself (the security, hosting and interop
/// tests): in memory, or with <c>CSPNET_TEST_REGISTRY=etcd</c> an etcd of the class's own, started
/// at the class's first NameServer and killed when the class is done; each NameServer gets a
/// prefix of its own, so its table starts empty.
/// </summary>
public sealed class TestRegistryFixture : IAsyncLifetime
{
    private readonly EtcdFixture _etcd = new();

    /// <summary>The options as given (in memory), or on the class's etcd under a new prefix when the run asks for etcd.</summary>
    internal async Task<NameServerHostOptions> ForThisRunAsync(NameServerHostOptions? options = null)
    {
        options ??= new NameServerHostOptions();
        if (!TestRegistry.OnEtcd)
        {
            return options;
        }

        if (EtcdProcess.SkipReason is { } missing)
        {
            throw new InvalidOperationException($"{TestRegistry.Variable}=etcd needs etcd: {missing}");
        }

        return options.UseEtcd(await _etcd.GetAsync());
    }

    /// <summary>Starts a NameServer on the registry this run asks for.</summary>
    internal async Task<NameServerHost> StartNameServerAsync(NameServerHostOptions? options = null) =>
        await NameServerHost.StartAsync(await ForThisRunAsync(options));

    public Task InitializeAsync() => Task.CompletedTask;

    public Task DisposeAsync() => _etcd.DisposeAsync();
}
