using System.Diagnostics;
using System.Globalization;

namespace CspNet.MultiHost;

/// <summary>
/// Programs on many hosts against one registry: how fast names register and resolve, what a name
/// costs the NameServer and etcd, whether traffic over every channel arrives exactly once, and how
/// long programs take to carry on after the NameServer they use dies.
/// </summary>
internal static class Scale
{
    internal static async Task<int> RunAsync(string registry, int hosts, int programs, int channels, int values, int soakSeconds)
    {
        int names = Math.Max(1, channels / programs);
        Console.WriteLine($"# {programs} programs on {hosts} hosts, {names * programs} named channels ({names} per program, each resolved by the next program), registry: {registry}");
        await using Cluster cluster = await Cluster.CreateAsync(hosts + 2);
        string[] registryArguments = [];
        (string Url, Child Process, string DataDir)? etcd = null;
        if (registry == "etcd")
        {
            etcd = await cluster.StartEtcdAsync(0);
            registryArguments = ["--registry", "etcd", "--etcd-endpoints", etcd.Value.Url];
        }

        Child first = await cluster.StartNameServerAsync(0, registryArguments);
        await cluster.StartNameServerAsync(1, registryArguments);
        long nameServerBefore = first.ResidentBytes();
        long etcdBefore = etcd?.Process.ResidentBytes() ?? 0;
        long etcdDiskBefore = etcd is { } e0 ? DiskBytes(e0.DataDir) : 0;

        long started = Stopwatch.GetTimestamp();
        var nodes = new List<Child>();
        for (int i = 0; i < programs; i++)
        {
            nodes.Add(cluster.StartRole(
                2 + (i % hosts),
                "node",
                "--nameserver", cluster.NameServerUri(0).ToString(), "--replica", cluster.NameServerUri(1).ToString(),
                "--index", i.ToString(CultureInfo.InvariantCulture), "--programs", programs.ToString(CultureInfo.InvariantCulture),
                "--names", names.ToString(CultureInfo.InvariantCulture), "--values", values.ToString(CultureInfo.InvariantCulture)));
        }

        await AllAsync(nodes, null, "ready", TimeSpan.FromMinutes(5));
        Console.WriteLine($"programs started and joined in {Stopwatch.GetElapsedTime(started).TotalSeconds:0.0} s");

        (TimeSpan registerTime, List<double> register) = await PhaseAsync(nodes, "register", "registered");
        long nameServerAfter = first.ResidentBytes();
        long etcdAfter = etcd?.Process.ResidentBytes() ?? 0;
        long etcdDiskAfter = etcd is { } e1 ? DiskBytes(e1.DataDir) : 0;
        (TimeSpan resolveTime, List<double> resolve) = await PhaseAsync(nodes, "resolve", "resolved");
        Report("register (program's GetOne2OneInAsync)", registerTime, register);
        Report("resolve + attach (GetOne2OneOutAsync)", resolveTime, resolve);
        int total = names * programs;
        Console.WriteLine($"NameServer memory per name: {(nameServerAfter - nameServerBefore) / (double)total:0} B (RSS {nameServerBefore >> 20} -> {nameServerAfter >> 20} MiB)");
        if (etcd is not null)
        {
            Console.WriteLine($"etcd memory per name: {(etcdAfter - etcdBefore) / (double)total:0} B (RSS {etcdBefore >> 20} -> {etcdAfter >> 20} MiB); disk per name: {(etcdDiskAfter - etcdDiskBefore) / (double)total:0} B");
        }

        List<string> traffic = await AllAsync(nodes, "traffic", "traffic", TimeSpan.FromMinutes(10));
        long moved = traffic.Sum(line => long.Parse(line.Split(' ')[2], CultureInfo.InvariantCulture));
        Console.WriteLine($"traffic: {moved} values over {total} channels, each read exactly once and in order: {(moved == (long)total * values ? "yes" : "NO")}");

        if (soakSeconds > 0)
        {
            long soakBefore = first.ResidentBytes();
            List<string> soak = await AllAsync(nodes, "soak " + soakSeconds.ToString(CultureInfo.InvariantCulture), "soak", TimeSpan.FromSeconds(soakSeconds + 300));
            long soaked = soak.Sum(line => long.Parse(line.Split(' ')[2], CultureInfo.InvariantCulture));
            int[] rss = soak.Select(line => int.Parse(line.Split(' ')[4], CultureInfo.InvariantCulture)).Order().ToArray();
            Console.WriteLine($"soak: {soakSeconds} s, {soaked} values, none lost, duplicated or out of order; program RSS median {rss[rss.Length / 2]} MiB, max {rss[^1]} MiB; NameServer RSS {soakBefore >> 20} -> {first.ResidentBytes() >> 20} MiB");
        }

        // The NameServer every program uses dies: how long until each can register again.
        await first.DisposeAsync();
        long killed = Stopwatch.GetTimestamp();
        List<string> recovered = await AllAsync(nodes, "recover 1", "recovered", TimeSpan.FromMinutes(5));
        List<double> recovery = recovered.Select(line => double.Parse(line.Split(' ')[1], CultureInfo.InvariantCulture)).ToList();
        (double p50, double p99, double max) = Cluster.Percentiles(recovery);
        Console.WriteLine($"after the first NameServer was killed: every program registered through the replica within {Stopwatch.GetElapsedTime(killed).TotalSeconds:0.00} s (per program: median {p50:0} ms, p99 {p99:0} ms, max {max:0} ms)");

        await AllAsync(nodes, "quit", null, TimeSpan.Zero);
        return 0;
    }

    private static async Task<(TimeSpan Wall, List<double> Micros)> PhaseAsync(List<Child> nodes, string command, string answer)
    {
        long start = Stopwatch.GetTimestamp();
        List<string> lines = await AllAsync(nodes, command, answer, TimeSpan.FromMinutes(10));
        TimeSpan wall = Stopwatch.GetElapsedTime(start);
        return (wall, lines.SelectMany(Cluster.ParseMicros).ToList());
    }

    /// <summary>Sends <paramref name="command"/> to every node (if any) and waits for each one's <paramref name="answer"/> (if any).</summary>
    private static async Task<List<string>> AllAsync(List<Child> nodes, string? command, string? answer, TimeSpan timeout)
    {
        if (command is not null)
        {
            await Task.WhenAll(nodes.Select(node => node.SendAsync(command)));
        }

        return answer is null ? [] : [.. await Task.WhenAll(nodes.Select(node => node.WaitForAsync(answer, timeout)))];
    }

    private static void Report(string what, TimeSpan wall, List<double> micros)
    {
        (double p50, double p99, double max) = Cluster.Percentiles(micros);
        Console.WriteLine($"{what}: {micros.Count} in {wall.TotalSeconds:0.00} s = {micros.Count / wall.TotalSeconds:0} /s; latency median {p50 / 1000:0.00} ms, p99 {p99 / 1000:0.00} ms, max {max / 1000:0.00} ms");
    }

    private static long DiskBytes(string folder) =>
        Directory.Exists(folder) ? new DirectoryInfo(folder).EnumerateFiles("*", SearchOption.AllDirectories).Sum(f => f.Length) : 0;
}
