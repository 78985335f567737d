using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using CspNet.Remote.Tests.MultiHost;
using CspNet.Remote.Tests.Security;

namespace CspNet.MultiHost;

/// <summary>
/// A rig of hosts with the cluster's certificates: host 0 runs the registry (etcd) and the first
/// NameServer, host 1 its replica, the others the programs. Everything it starts it stops.
/// </summary>
internal sealed class Cluster : IAsyncDisposable
{
    private readonly ClusterCertificates _certificates = new();
    private readonly DirectoryInfo _files = Directory.CreateTempSubdirectory("cspnet-multihost-");
    private readonly List<Child> _children = [];
    private readonly string _clusterKey = Convert.ToHexString(RandomNumberGenerator.GetBytes(16));

    private readonly PosixSignalRegistration[] _stopSignals;
    private int _disposed;

    private Cluster(NetworkNamespaceRig rig)
    {
        Rig = rig;

        // Ctrl+C or a kill of the harness must not leave a hundred programs, etcd and the
        // namespaces behind: tear everything down first, then let the signal end the process.
        _stopSignals = [.. new[] { PosixSignal.SIGINT, PosixSignal.SIGTERM }.Select(signal => PosixSignalRegistration.Create(signal, _ =>
        {
            Console.Error.WriteLine($"{signal}: stopping every program and removing the hosts");
            DisposeAsync().AsTask().GetAwaiter().GetResult();
        }))];
    }

    internal NetworkNamespaceRig Rig { get; }

    internal static async Task<Cluster> CreateAsync(int hosts) => new(await NetworkNamespaceRig.CreateAsync(hosts));

    internal Uri NameServerUri(int host) => new($"https://{Rig.Addresses[host]}:9090");

    /// <summary>Starts etcd on <paramref name="host"/>; returns its client URL and data folder.</summary>
    internal async Task<(string Url, Child Process, string DataDir)> StartEtcdAsync(int host)
    {
        string url = $"http://{Rig.Addresses[host]}:2379";
        string data = Path.Combine(_files.FullName, "etcd");
        Child etcd = Start(Rig.InHost(host, "/usr/bin/etcd", "--data-dir", data, "--listen-client-urls", url, "--advertise-client-urls", url,
            "--listen-peer-urls", "http://127.0.0.1:2380", "--logger", "zap", "--log-outputs", "stdout"), "etcd");
        await etcd.WaitForAsync("serving client traffic", TimeSpan.FromSeconds(30));
        return (url, etcd, data);
    }

    /// <summary>Starts the NameServer program on <paramref name="host"/>, port 9090, with TLS.</summary>
    internal async Task<Child> StartNameServerAsync(int host, params string[] arguments)
    {
        (string certificate, string key, string authority) = Files(host);
        ProcessStartInfo start = Rig.InHost(host, "dotnet",
            [NameServerProgram(), "--address", Rig.Addresses[host], "--port", "9090",
             "--tls-certificate", certificate, "--tls-key", key, "--tls-authority", authority, .. arguments]);
        start.Environment["CSPNET_NameServer__ClusterKey"] = _clusterKey;
        Child nameServer = Start(start, "nameserver@" + host);
        await nameServer.WaitForAsync("Now listening on:", TimeSpan.FromSeconds(60));
        return nameServer;
    }

    /// <summary>Starts one of this program's roles (node, fill-read...) on <paramref name="host"/>.</summary>
    internal Child StartRole(int host, string role, params string[] arguments) => StartRole(host, role, [], arguments);

    /// <summary>Starts one of this program's roles on <paramref name="host"/> with more <paramref name="environment"/>.</summary>
    internal Child StartRole(int host, string role, IEnumerable<KeyValuePair<string, string>> environment, params string[] arguments)
    {
        (string certificate, string key, string authority) = Files(host);
        ProcessStartInfo start = Rig.InHost(host, "dotnet",
            [Path.Combine(AppContext.BaseDirectory, "CspNet.MultiHost.dll"), role, "--address", Rig.Addresses[host], .. arguments]);
        start.Environment["CSPNET_CLUSTER_KEY"] = _clusterKey;
        start.Environment["CSPNET_CERTIFICATE_FILE"] = certificate;
        start.Environment["CSPNET_CERTIFICATE_KEY_FILE"] = key;
        start.Environment["CSPNET_TRUSTED_CERTIFICATE_FILE"] = authority;
        foreach ((string name, string value) in environment)
        {
            start.Environment[name] = value;
        }

        return Start(start, "node@" + host);
    }

    /// <summary>Starts any program on <paramref name="host"/>, stopped with the cluster.</summary>
    internal Child Start(ProcessStartInfo start, string label)
    {
        Child child = Child.Start(start, label);
        lock (_children)
        {
            _children.Add(child);
        }

        return child;
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        Child[] children;
        lock (_children)
        {
            children = [.. _children];
        }

        foreach (Child child in children)
        {
            await child.DisposeAsync();
        }

        await Rig.DisposeAsync();
        _certificates.Dispose();
        _files.Delete(recursive: true);
        foreach (PosixSignalRegistration registration in _stopSignals)
        {
            registration.Dispose();
        }
    }

    /// <summary>The NameServer program built beside this one (same configuration and framework).</summary>
    private static string NameServerProgram()
    {
        var output = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));
        for (DirectoryInfo? dir = output; dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "CspNet.sln")))
            {
                return Path.Combine(dir.FullName, "NameServer", "bin", output.Parent!.Name, output.Name, "cspnet-nameserver.dll");
            }
        }

        throw new InvalidOperationException("CspNet.sln not found above " + AppContext.BaseDirectory);
    }

    private (string Certificate, string Key, string Authority) Files(int host) =>
        _certificates.FilesFor(Rig.Addresses[host], _files.FullName);

    /// <summary>Median, 99th percentile and maximum of <paramref name="values"/>.</summary>
    internal static (double P50, double P99, double Max) Percentiles(List<double> values)
    {
        values.Sort();
        double At(double q) => values[Math.Min(values.Count - 1, (int)(q * values.Count))];
        return (At(0.5), At(0.99), values[^1]);
    }

    internal static List<double> ParseMicros(string line) =>
        line[(line.IndexOf(' ', StringComparison.Ordinal) + 1)..].Split(',').Select(v => double.Parse(v, CultureInfo.InvariantCulture)).ToList();
}
