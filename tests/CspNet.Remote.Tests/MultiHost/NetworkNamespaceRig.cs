using System.Diagnostics;

namespace CspNet.Remote.Tests.MultiHost;

/// <summary>
/// Hosts of their own on this machine: one Linux network namespace per host, each with one
/// address on a shared switch (a bridge in a namespace of its own), so that programs bind and dial
/// non-loopback addresses as on separate machines, and a test can cut a host's cable.
/// </summary>
/// <remarks>
/// Nothing outside the rig's own namespaces changes: the bridge lives in the switch namespace and
/// every veth pair is created straight into the namespaces it joins. Disposing kills whatever
/// still runs in the rig's namespaces and deletes them. eng/netns-rig.sh builds the same rig by hand.
/// </remarks>
internal sealed class NetworkNamespaceRig : IAsyncDisposable
{
    private static readonly Lazy<string?> Unavailable = new(Probe);
    private readonly string _tag;
    private readonly List<string> _namespaces = [];

    private NetworkNamespaceRig(string tag, int subnet)
    {
        _tag = tag;
        Subnet = subnet;
    }

    /// <summary>Why no rig can be built here (not Linux, not root, no <c>ip</c>), or null when one can.</summary>
    internal static string? SkipReason => Unavailable.Value;

    /// <summary>The hosts, in the order created: host i has address 10.77.{subnet}.{i + 1}.</summary>
    internal IReadOnlyList<string> Addresses => _addresses;

    private readonly List<string> _addresses = [];

    private int Subnet { get; }

    private string Switch => _tag + "-sw";

    /// <summary>Creates <paramref name="hosts"/> hosts on one switch.</summary>
    internal static async Task<NetworkNamespaceRig> CreateAsync(int hosts)
    {
        // Namespaces are named per rig, so rigs of parallel tests (or of a crashed run) never meet.
        string tag = "cs" + Convert.ToHexString(BitConverter.GetBytes(Random.Shared.Next())).ToLowerInvariant()[..6];
        var rig = new NetworkNamespaceRig(tag, Random.Shared.Next(1, 250));
        try
        {
            await rig.AddNamespaceAsync(rig.Switch);
            await IpAsync("-n", rig.Switch, "link", "add", "br0", "type", "bridge");
            await IpAsync("-n", rig.Switch, "link", "set", "br0", "up");
            for (int i = 0; i < hosts; i++)
            {
                await rig.AddHostAsync(i);
            }

            return rig;
        }
        catch
        {
            await rig.DisposeAsync();
            throw;
        }
    }

    /// <summary>The namespace of host <paramref name="host"/>.</summary>
    internal string Namespace(int host) => $"{_tag}-h{host}";

    /// <summary>Unplugs host <paramref name="host"/>'s cable at the switch: its packets go nowhere, no connection is told.</summary>
    internal Task CutAsync(int host) => IpAsync("-n", Switch, "link", "set", SwitchPort(host), "down");

    /// <summary>Plugs host <paramref name="host"/>'s cable back in.</summary>
    internal Task RestoreAsync(int host) => IpAsync("-n", Switch, "link", "set", SwitchPort(host), "up");

    /// <summary>A start of <paramref name="fileName"/> with <paramref name="arguments"/> inside host <paramref name="host"/>.</summary>
    internal ProcessStartInfo InHost(int host, string fileName, params string[] arguments)
    {
        // `ip netns exec` enters the namespace and then executes the program in its own process,
        // so the process a test holds (and kills) is the program itself.
        var start = new ProcessStartInfo("ip");
        foreach (string argument in (string[])["netns", "exec", Namespace(host), fileName, .. arguments])
        {
            start.ArgumentList.Add(argument);
        }

        return start;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (string name in Enumerable.Reverse(_namespaces))
        {
            // A program a test left running inside would keep nothing alive after the namespace is
            // gone, but it would outlive the suite: end it first.
            string pids = await IpOutputAsync("netns", "pids", name);
            foreach (string pid in pids.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                try
                {
                    using Process process = Process.GetProcessById(int.Parse(pid, System.Globalization.CultureInfo.InvariantCulture));
                    process.Kill(entireProcessTree: true);
                    await process.WaitForExitAsync();
                }
                catch (ArgumentException)
                {
                    // Already gone.
                }
            }

            await IpOutputAsync("netns", "del", name);
        }
    }

    private string SwitchPort(int host) => $"{_tag}-p{host}";

    private async Task AddHostAsync(int host)
    {
        string ns = Namespace(host);
        string address = $"10.77.{Subnet}.{host + 1}";
        await AddNamespaceAsync(ns);
        await IpAsync("link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", SwitchPort(host), "netns", Switch);
        await IpAsync("-n", Switch, "link", "set", SwitchPort(host), "master", "br0");
        await IpAsync("-n", Switch, "link", "set", SwitchPort(host), "up");
        await IpAsync("-n", ns, "addr", "add", address + "/24", "dev", "eth0");
        await IpAsync("-n", ns, "link", "set", "eth0", "up");
        await IpAsync("-n", ns, "link", "set", "lo", "up");
        _addresses.Add(address);
    }

    private async Task AddNamespaceAsync(string name)
    {
        await IpAsync("netns", "add", name);
        _namespaces.Add(name);
    }

    private static async Task IpAsync(params string[] arguments)
    {
        (int exit, string output) = await RunIpAsync(arguments);
        if (exit != 0)
        {
            throw new InvalidOperationException($"ip {string.Join(' ', arguments)} failed ({exit}): {output}");
        }
    }

    private static async Task<string> IpOutputAsync(params string[] arguments) => (await RunIpAsync(arguments)).Output;

    private static async Task<(int Exit, string Output)> RunIpAsync(string[] arguments)
    {
        var start = new ProcessStartInfo("ip") { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> error = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await process.WaitForExitAsync(timeout.Token);
        return (process.ExitCode, await output + await error);
    }

    private static string? Probe()
    {
        if (!OperatingSystem.IsLinux())
        {
            return "The multi-host rig needs Linux network namespaces.";
        }

        if (Environment.UserName != "root" && !string.Equals(Environment.GetEnvironmentVariable("USER"), "root", StringComparison.Ordinal))
        {
            return "The multi-host rig creates network namespaces, which needs root (CI runs as root): run the tests as root to include it.";
        }

        try
        {
            string name = "csprobe" + Environment.ProcessId;
            (int exit, string output) = RunIpAsync(["netns", "add", name]).GetAwaiter().GetResult();
            if (exit != 0)
            {
                return $"The multi-host rig cannot create a network namespace here (`ip netns add` said: {output.Trim()}).";
            }

            RunIpAsync(["netns", "del", name]).GetAwaiter().GetResult();
            return null;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return "The multi-host rig needs the `ip` command (Debian package iproute2).";
        }
    }
}
