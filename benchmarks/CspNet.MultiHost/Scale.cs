using System.Diagnostics;
using System.Globalization;

namespace CspNet.MultiHost;

/// <summary>
/// Programs on many hosts against one registry: how fast names and worker pools register and
/// resolve, what a name costs the NameServer and etcd, whether traffic over every channel arrives
/// exactly once (for a moment, then for a soak with memory sampled over time), and how long
/// programs take to carry on after the NameServer they use dies, step by step.
/// </summary>
internal static class Scale
{
    // Programs starting at once: more only queue for the same two cores and, started together,
    // make the NameServer's first calls miss their deadline (programs then fail over at start).
    private const int StartingAtOnce = 8;

    internal static async Task<int> RunAsync(string registry, int hosts, int programs, int channels, int values, int pools, int soakSeconds, int sampleSeconds, int peerTimeoutSeconds, int atOnce)
    {
        int names = Math.Max(1, channels / programs);
        pools = Math.Min(pools, programs);
        Console.WriteLine($"# {programs} programs on {hosts} hosts, {names * programs} named channels ({names} per program, each resolved by the next program), {pools} worker pools, registry: {registry}; PeerTimeout {peerTimeoutSeconds} s; {(atOnce >= programs ? "every program at once" : $"{atOnce} programs at a time")} in the register, resolve and look-up phases; {Load()}");
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
        using (var starting = new SemaphoreSlim(StartingAtOnce))
        {
            var ready = new List<Task>();
            for (int i = 0; i < programs; i++)
            {
                await starting.WaitAsync();
                if (ready.Find(task => task.IsFaulted) is { } failed)
                {
                    // A program that could not start ends the run now, naming it.
                    await failed;
                }

                Child node = cluster.StartRole(
                    2 + (i % hosts),
                    "node",
                    "--nameserver", cluster.NameServerUri(0).ToString(), "--replica", cluster.NameServerUri(1).ToString(),
                    "--index", i.ToString(CultureInfo.InvariantCulture), "--programs", programs.ToString(CultureInfo.InvariantCulture),
                    "--names", names.ToString(CultureInfo.InvariantCulture), "--values", values.ToString(CultureInfo.InvariantCulture),
                    "--peer-timeout", peerTimeoutSeconds.ToString(CultureInfo.InvariantCulture));
                nodes.Add(node);
                ready.Add(ReadyAsync(node));
            }

            await Task.WhenAll(ready);

            async Task ReadyAsync(Child node)
            {
                try
                {
                    await node.WaitForAsync("ready", TimeSpan.FromMinutes(5));
                }
                finally
                {
                    starting.Release();
                }
            }
        }

        Console.WriteLine($"programs started ({StartingAtOnce} at a time) and joined in {Stopwatch.GetElapsedTime(started).TotalSeconds:0.0} s; {Load()}");

        (TimeSpan registerTime, List<double> register) = await PhaseAsync(nodes, "register", "registered", atOnce);
        long nameServerAfter = first.ResidentBytes();
        long etcdAfter = etcd?.Process.ResidentBytes() ?? 0;
        long etcdDiskAfter = etcd is { } e1 ? DiskBytes(e1.DataDir) : 0;
        (TimeSpan resolveTime, List<double> resolve) = await PhaseAsync(nodes, "resolve", "resolved", atOnce);
        Report("register (program's GetOne2OneInAsync)", registerTime, register);
        Report("resolve + attach (GetOne2OneOutAsync)", resolveTime, resolve);
        int total = names * programs;
        Console.WriteLine($"NameServer memory per name: {(nameServerAfter - nameServerBefore) / (double)total:0} B (RSS {nameServerBefore >> 20} -> {nameServerAfter >> 20} MiB)");
        if (etcd is not null)
        {
            Console.WriteLine($"etcd memory per name: {(etcdAfter - etcdBefore) / (double)total:0} B (RSS {etcdBefore >> 20} -> {etcdAfter >> 20} MiB); disk per name: {(etcdDiskAfter - etcdDiskBefore) / (double)total:0} B");
        }

        if (pools > 0)
        {
            // Pools on the first programs (spread over the hosts), then every program looks them up.
            List<Child> poolNodes = nodes.GetRange(0, pools);
            long start = Stopwatch.GetTimestamp();
            string[] pooled = await Task.WhenAll(poolNodes.Select((node, i) => SendAndWaitAsync(node, "pool pool" + i.ToString(CultureInfo.InvariantCulture), "pooled")));
            Report("worker pool start + register (WorkerPoolHost.StartAsync)", Stopwatch.GetElapsedTime(start), pooled.SelectMany(Cluster.ParseMicros).ToList());
            (TimeSpan listTime, List<double> listed) = await PhaseAsync(nodes, "pools 5 " + pools.ToString(CultureInfo.InvariantCulture), "listed", atOnce);
            Report($"list the {pools} free pools (DistParallel's look-up), 5 per program", listTime, listed);
        }

        List<string> traffic = await AllAsync(nodes, "traffic", "traffic", TimeSpan.FromMinutes(10));
        long moved = traffic.Sum(line => long.Parse(line.Split(' ')[2], CultureInfo.InvariantCulture));
        Console.WriteLine($"traffic: {moved} values over {total} channels, each read exactly once and in order: {(moved == (long)total * values ? "yes" : "NO")}");

        if (soakSeconds > 0)
        {
            await SoakAsync(nodes, first, etcd?.Process, total, soakSeconds, sampleSeconds);
        }

        // The NameServer every program uses dies: how long until each can register again, and
        // then how long a second registration takes (the replica warm, the lease settled).
        Console.WriteLine($"killing the first NameServer; {Load()}");
        await first.DisposeAsync();
        long killed = Stopwatch.GetTimestamp();
        List<string> recovered = await AllAsync(nodes, "recover 1", "recovered", TimeSpan.FromMinutes(5));
        TimeSpan allBack = Stopwatch.GetElapsedTime(killed);
        List<string> again = await AllAsync(nodes, "recover 2", "recovered", TimeSpan.FromMinutes(5));
        ReportRecovery(allBack, recovered, again);

        await AllAsync(nodes, "quit", null, TimeSpan.Zero);
        return 0;
    }

    /// <summary>
    /// Every channel busy for <paramref name="seconds"/>; meanwhile the programs', the NameServer's
    /// and etcd's resident memory every <paramref name="sampleSeconds"/>, one line each, then first,
    /// last and largest side by side, so that "flat" can be judged.
    /// </summary>
    private static async Task SoakAsync(List<Child> nodes, Child nameServer, Child? etcd, int channels, int seconds, int sampleSeconds)
    {
        var samples = new List<(double Seconds, long Programs, long Largest, long NameServer, long Etcd)>();
        void Sample(double at)
        {
            long[] rss = nodes.Select(node => node.ResidentBytes()).ToArray();
            (double, long, long, long, long) sample = (at, rss.Sum(), rss.Max(), nameServer.ResidentBytes(), etcd?.ResidentBytes() ?? 0);
            samples.Add(sample);
            Console.WriteLine($"soak {at,5:0} s: programs' RSS {sample.Item2 >> 20} MiB in all (largest {sample.Item3 >> 20} MiB); NameServer {sample.Item4 >> 20} MiB{(etcd is null ? "" : $"; etcd {sample.Item5 >> 20} MiB")}; {Load()}");
        }

        long start = Stopwatch.GetTimestamp();
        Sample(0);
        Task<List<string>> soak = AllAsync(nodes, "soak " + seconds.ToString(CultureInfo.InvariantCulture), "soak", TimeSpan.FromSeconds(seconds + 300));
        using (var timer = new PeriodicTimer(TimeSpan.FromSeconds(sampleSeconds)))
        {
            while (await Task.WhenAny(soak, timer.WaitForNextTickAsync().AsTask()) != soak)
            {
                Sample(Stopwatch.GetElapsedTime(start).TotalSeconds);
            }
        }

        List<string> lines = await soak;
        long soaked = lines.Sum(line => long.Parse(line.Split(' ')[2], CultureInfo.InvariantCulture));
        long written = lines.Sum(line => long.Parse(line.Split(' ')[5], CultureInfo.InvariantCulture));
        Console.WriteLine($"soak: {seconds} s, {written} values written and {soaked} read over {channels} channels ({soaked / (double)seconds:0} /s), each reader getting every value in order: {(soaked == written ? "yes, none lost or duplicated" : "NO")}");

        // The first sample is taken as the soak starts; "flat" compares the rest with it.
        string Row(string what, Func<(double, long, long, long, long), long> of) =>
            $"  {what}: first {of(samples[0]) >> 20} MiB, after {samples[1].Seconds:0} s {of(samples[1]) >> 20} MiB, last {of(samples[^1]) >> 20} MiB, largest {samples.Max(of) >> 20} MiB";
        if (samples.Count > 1)
        {
            Console.WriteLine("soak memory (RSS):");
            Console.WriteLine(Row("programs in all", s => s.Item2));
            Console.WriteLine(Row("largest program", s => s.Item3));
            Console.WriteLine(Row("NameServer", s => s.Item4));
            if (etcd is not null)
            {
                Console.WriteLine(Row("etcd", s => s.Item5));
            }
        }
    }

    private static void ReportRecovery(TimeSpan allBack, List<string> recovered, List<string> again)
    {
        // "recovered MS failover F lease-lost L lease-opened O ...": F, L, O in ms since the program heard "recover", or "-".
        static double Ms(string line) => double.Parse(line.Split(' ')[1], CultureInfo.InvariantCulture);
        static List<double> Step(List<string> lines, string step) => lines
            .Select(line => line.Split(' '))
            .Select(words => words[Array.IndexOf(words, step) + 1])
            .Where(value => value != "-")
            .Select(value => double.Parse(value, CultureInfo.InvariantCulture))
            .ToList();

        (double p50, double p99, double max) = Cluster.Percentiles(recovered.Select(Ms).ToList());
        Console.WriteLine($"after the first NameServer was killed: every program registered through the replica within {allBack.TotalSeconds:0.00} s (per program: median {p50:0} ms, p99 {p99:0} ms, max {max:0} ms)");
        foreach (string step in (string[])["failover", "lease-lost", "lease-opened"])
        {
            List<double> at = Step(recovered, step);
            if (at.Count > 0)
            {
                (double s50, _, double smax) = Cluster.Percentiles(at);
                Console.WriteLine($"  {step}: seen by {at.Count} programs, median {s50:0} ms, max {smax:0} ms after the kill was announced");
            }
        }

        (double a50, double a99, double amax) = Cluster.Percentiles(again.Select(Ms).ToList());
        Console.WriteLine($"  a second registration through the replica, all programs at once: median {a50:0} ms, p99 {a99:0} ms, max {amax:0} ms");
    }

    private static async Task<string> SendAndWaitAsync(Child node, string command, string answer)
    {
        await node.SendAsync(command);
        return await node.WaitForAsync(answer, TimeSpan.FromMinutes(5));
    }

    /// <summary>
    /// One phase: every node runs <paramref name="command"/>, at most <paramref name="atOnce"/> at a
    /// time (a node's turn ends with its answer), so that on a machine with far fewer cores than
    /// programs the phase measures the NameServer and the links rather than queues for the cores.
    /// </summary>
    private static async Task<(TimeSpan Wall, List<double> Micros)> PhaseAsync(List<Child> nodes, string command, string answer, int atOnce)
    {
        long start = Stopwatch.GetTimestamp();
        List<string> lines;
        if (atOnce >= nodes.Count)
        {
            lines = await AllAsync(nodes, command, answer, TimeSpan.FromMinutes(10));
        }
        else
        {
            using var turns = new SemaphoreSlim(atOnce);
            lines = [.. await Task.WhenAll(nodes.Select(async node =>
            {
                await turns.WaitAsync();
                try
                {
                    return await SendAndWaitAsync(node, command, answer);
                }
                finally
                {
                    turns.Release();
                }
            }))];
        }

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
        Console.WriteLine($"{what}: {micros.Count} in {wall.TotalSeconds:0.00} s = {micros.Count / wall.TotalSeconds:0} /s; latency median {p50 / 1000:0.00} ms, p99 {p99 / 1000:0.00} ms, max {max / 1000:0.00} ms; {Load()}");
    }

    /// <summary>The machine's load average (1, 5, 15 minutes), from /proc.</summary>
    internal static string Load() => "load " + string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));

    private static long DiskBytes(string folder) =>
        Directory.Exists(folder) ? new DirectoryInfo(folder).EnumerateFiles("*", SearchOption.AllDirectories).Sum(f => f.Length) : 0;
}
