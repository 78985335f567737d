using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Xunit.Abstractions;
using Xunit.Sdk;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// A single-member etcd on 127.0.0.1 (Debian's etcd-server, /usr/bin/etcd), on free client and
/// peer ports with a data folder of its own; disposing kills it and deletes the folder.
/// </summary>
/// <remarks>
/// Heartbeat 10 ms and election timeout 100 ms make it ready within a second and let leases
/// as short as one second be granted (etcd's shortest lease follows the election timeout).
/// </remarks>
public sealed class EtcdProcess : IAsyncDisposable
{
    private const string ReadyMarker = "serving client traffic";

    // $0 is etcd, "$@" its arguments; fd 3 keeps the pipe, as a background job's stdin is /dev/null.
    private const string WatchParentScript = """
        exec 3<&0
        "$0" "$@" &
        etcd=$!
        { read -r _ <&3; kill "$etcd"; } >/dev/null 2>&1 &
        wait "$etcd"
        """;

    private readonly string _dataDir;
    private readonly int _peerPort;
    private readonly string[] _tlsArguments;
    private readonly string _name;
    private readonly string _initialCluster;
    private Process? _process;

    private EtcdProcess(string dataDir, int clientPort, int peerPort, string[] tlsArguments, string name = "test", string? initialCluster = null)
    {
        _dataDir = dataDir;
        ClientPort = clientPort;
        _peerPort = peerPort;
        _tlsArguments = tlsArguments;
        _name = name;
        _initialCluster = initialCluster ?? name + "=http://127.0.0.1:" + peerPort;
    }

    /// <summary>The etcd binary: <c>ETCD_BINARY</c>, else /usr/bin/etcd.</summary>
    public static string Binary => Environment.GetEnvironmentVariable("ETCD_BINARY") is { Length: > 0 } path ? path : "/usr/bin/etcd";

    /// <summary>Why etcd tests are skipped here, or <see langword="null"/> to run them. In CI they always run (.ci/run installs etcd).</summary>
    public static string? SkipReason =>
        File.Exists(Binary) || string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase)
            ? null
            : $"etcd is not installed ({Binary} is missing): apt-get install etcd-server, or set ETCD_BINARY. CI installs it and runs these tests.";

    public int ClientPort { get; }

    /// <summary>The client URL, e.g. <c>http://127.0.0.1:40123</c> (<c>https://</c> with TLS).</summary>
    public string ClientUrl => (_tlsArguments.Length > 0 ? "https" : "http") + "://127.0.0.1:" + ClientPort;

    /// <summary>Starts a member; with <paramref name="tlsArguments"/> (etcd's --cert-file ... flags) its client URL is https.</summary>
    public static async Task<EtcdProcess> StartAsync(params string[] tlsArguments)
    {
        var etcd = new EtcdProcess(Directory.CreateTempSubdirectory("cspnet-etcd-").FullName, FreePort(), FreePort(), tlsArguments);
        try
        {
            await etcd.RestartAsync();
            return etcd;
        }
        catch
        {
            await etcd.DisposeAsync();
            throw;
        }
    }

    /// <summary>Starts a cluster of <paramref name="members"/> members on 127.0.0.1, all at once (each is ready only when a majority is up).</summary>
    public static async Task<EtcdProcess[]> StartClusterAsync(int members)
    {
        (int Client, int Peer)[] ports = [.. Enumerable.Range(0, members).Select(_ => (FreePort(), FreePort()))];
        string cluster = string.Join(',', ports.Select((p, i) => $"m{i}=http://127.0.0.1:{p.Peer}"));
        EtcdProcess[] started = [.. ports.Select((p, i) => new EtcdProcess(Directory.CreateTempSubdirectory("cspnet-etcd-").FullName, p.Client, p.Peer, [], "m" + i, cluster))];
        try
        {
            await Task.WhenAll(started.Select(member => member.RestartAsync()));
            return started;
        }
        catch
        {
            foreach (EtcdProcess member in started)
            {
                await member.DisposeAsync();
            }

            throw;
        }
    }

    /// <summary>Kills the member at once (no graceful shutdown), keeping its data.</summary>
    public async Task StopAsync()
    {
        if (_process is { } process)
        {
            _process = null;
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }

            await process.WaitForExitAsync();
            process.Dispose();
        }
    }

    /// <summary>Starts the member on its ports and data (again), and waits until it serves clients.</summary>
    public async Task RestartAsync()
    {
        await StopAsync();
        string peer = "http://127.0.0.1:" + _peerPort;
        // etcd runs under a shell that kills it when this process's end of its standard input
        // closes: also when the test process is killed rather than disposing the fixture, so no
        // etcd outlives the run. The shell exits with etcd, keeping "it exited" visible below.
        var start = new ProcessStartInfo("/bin/sh")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            ArgumentList =
            {
                "-c", WatchParentScript, Binary,
                "--name", _name, "--data-dir", _dataDir,
                "--listen-client-urls", ClientUrl, "--advertise-client-urls", ClientUrl,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", _initialCluster, "--initial-cluster-state", "new",
                "--heartbeat-interval", "10", "--election-timeout", "100",
                "--logger", "zap", "--log-outputs", "stderr",
            },
        };
        foreach (string argument in _tlsArguments)
        {
            start.ArgumentList.Add(argument);
        }

        Process process = Process.Start(start)!;
        _process = process;
        var ready = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new System.Collections.Concurrent.ConcurrentQueue<string>();
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is { } line)
            {
                if (log.Count < 200)
                {
                    log.Enqueue(line);
                }

                if (line.Contains(ReadyMarker, StringComparison.Ordinal))
                {
                    ready.TrySetResult();
                }
            }
        };
        process.OutputDataReceived += static (_, _) => { };
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        Task exited = process.WaitForExitAsync();
        Task first = await Task.WhenAny(ready.Task, exited, Task.Delay(TimeSpan.FromSeconds(20)));
        if (first != ready.Task)
        {
            await StopAsync();
            throw new InvalidOperationException($"etcd did not become ready ({(first == exited ? "it exited" : "20 s passed")}): " + string.Join('\n', log));
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        try
        {
            Directory.Delete(_dataDir, recursive: true);
        }
        catch (IOException)
        {
            // A temporary folder left behind is harmless.
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}

/// <summary>One etcd shared by the tests of a class; started at the first test that asks for it, killed when the class is done.</summary>
public sealed class EtcdFixture : IAsyncLifetime
{
    private readonly Lazy<Task<EtcdProcess>> _etcd = new(() => EtcdProcess.StartAsync());

    public Task<EtcdProcess> GetAsync() => _etcd.Value;

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        if (_etcd.IsValueCreated && _etcd.Value.IsCompletedSuccessfully)
        {
            await _etcd.Value.Result.DisposeAsync();
        }
    }
}

/// <summary>Marks a test class or method that needs etcd: its <see cref="RegistryFactAttribute"/> and <see cref="RegistryTheoryAttribute"/> tests are skipped, saying why, where etcd is not installed (outside CI).</summary>
[AttributeUsage(AttributeTargets.Class | AttributeTargets.Method)]
public sealed class RequiresEtcdAttribute : Attribute;

/// <summary>A fact that is skipped in a <see cref="RequiresEtcdAttribute"/> class when etcd is missing.</summary>
[XunitTestCaseDiscoverer("CspNet.Remote.Tests.NameServer.RegistryFactDiscoverer", "CspNet.Remote.Tests")]
[AttributeUsage(AttributeTargets.Method)]
public sealed class RegistryFactAttribute : FactAttribute;

/// <summary>A theory that is skipped in a <see cref="RequiresEtcdAttribute"/> class when etcd is missing.</summary>
[XunitTestCaseDiscoverer("CspNet.Remote.Tests.NameServer.RegistryTheoryDiscoverer", "CspNet.Remote.Tests")]
[AttributeUsage(AttributeTargets.Method)]
public sealed class RegistryTheoryAttribute : TheoryAttribute;

public sealed class RegistryFactDiscoverer(IMessageSink diagnosticMessageSink) : FactDiscoverer(diagnosticMessageSink)
{
    public override IEnumerable<IXunitTestCase> Discover(ITestFrameworkDiscoveryOptions discoveryOptions, ITestMethod testMethod, IAttributeInfo factAttribute) =>
        EtcdSkip.Of(testMethod) is { } reason
            ? [new XunitSkippedDataRowTestCase(DiagnosticMessageSink, discoveryOptions.MethodDisplayOrDefault(), discoveryOptions.MethodDisplayOptionsOrDefault(), testMethod, reason)]
            : base.Discover(discoveryOptions, testMethod, factAttribute);
}

public sealed class RegistryTheoryDiscoverer(IMessageSink diagnosticMessageSink) : TheoryDiscoverer(diagnosticMessageSink)
{
    public override IEnumerable<IXunitTestCase> Discover(ITestFrameworkDiscoveryOptions discoveryOptions, ITestMethod testMethod, IAttributeInfo theoryAttribute) =>
        EtcdSkip.Of(testMethod) is { } reason
            ? [new XunitSkippedDataRowTestCase(DiagnosticMessageSink, discoveryOptions.MethodDisplayOrDefault(), discoveryOptions.MethodDisplayOptionsOrDefault(), testMethod, reason)]
            : base.Discover(discoveryOptions, testMethod, theoryAttribute);
}

internal static class EtcdSkip
{
    internal static string? Of(ITestMethod testMethod) =>
        testMethod.TestClass.Class.GetCustomAttributes(typeof(RequiresEtcdAttribute)).Any() || testMethod.Method.GetCustomAttributes(typeof(RequiresEtcdAttribute)).Any()
            ? EtcdProcess.SkipReason
            : null;
}
