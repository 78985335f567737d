using System.Buffers.Binary;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using CspNet.Remote;

namespace CspNet.MultiHost;

/// <summary>
/// How much of a link a buffered named channel fills, beside raw TCP (in clear and over TLS, as the
/// channel is between hosts) over the same link: a writer on one host, a reader on another, the
/// writer's side limited by <c>tc tbf</c> or not at all.
/// </summary>
internal static class Fill
{
    private const int Port = 5555;

    internal static async Task<int> RunAsync(string[] rates, int[] sizes, int seconds, int warmup, bool[] lanes, bool inlineCompletions)
    {
        await using Cluster cluster = await Cluster.CreateAsync(3);
        await cluster.StartNameServerAsync(0);
        KeyValuePair<string, string>[] environment = [.. LargeValueGc, new(InlineCompletions, inlineCompletions ? "1" : "0")];
        Console.WriteLine($"# a writer on one host, a reader on another; {seconds} s measured after a warm-up of {warmup} s or more (until the reader's JIT is quiet); MB/s = 10^6 bytes/s; load {Load()}");
        Console.WriteLine($"# every pair's environment: {string.Join(' ', environment.Select(variable => $"{variable.Key}={variable.Value}"))}");
        Console.WriteLine("| link | value | named buffered channel (TLS) | buffer | bulk lane | raw TCP over TLS | raw TCP in clear | named / raw TLS | named / raw clear | named reader's warm-up; its JIT while measured |");
        Console.WriteLine("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|");
        foreach (string rate in rates)
        {
            await cluster.Rig.LimitRateAsync(2, rate == "none" ? null : rate);
            foreach (int size in sizes)
            {
                string text = size.ToString(CultureInfo.InvariantCulture);
                string duration = seconds.ToString(CultureInfo.InvariantCulture);
                string warm = warmup.ToString(CultureInfo.InvariantCulture);
                string ns = cluster.NameServerUri(0).ToString();
                (double tls, _, _) = await PairAsync(cluster, "raw TCP over TLS", environment, ["tcp-read", "--tls", "--seconds", duration, "--warmup", warm], ["tcp-write", "--tls", "--peer", cluster.Rig.Addresses[1], "--size", text]);
                (double clear, _, _) = await PairAsync(cluster, "raw TCP in clear", environment, ["tcp-read", "--seconds", duration, "--warmup", warm], ["tcp-write", "--peer", cluster.Rig.Addresses[1], "--size", text]);
                foreach (bool lane in lanes)
                {
                    string[] noLane = lane ? [] : ["--no-lane"];
                    string name = $"fill{text}{(lane ? "lane" : "link")}";
                    (double named, double jitMs, double warmed) = await PairAsync(cluster, $"named channel, lane {(lane ? "on" : "off")}", environment, ["fill-read", "--nameserver", ns, "--name", name, "--size", text, "--buffer", BufferFor(size).ToString(CultureInfo.InvariantCulture), "--seconds", duration, "--warmup", warm, .. noLane],
                        ["fill-write", "--nameserver", ns, "--name", name, "--size", text, .. noLane]);
                    Console.WriteLine($"| {rate} | {Size(size)} | {named:0} | {BufferFor(size)} | {(lane ? "on" : "off")} | {tls:0} | {clear:0} | {named / tls:0.00}x | {named / clear:0.00}x | {warmed:0} s; {jitMs:0} ms |");
                }
            }
        }

        Console.WriteLine($"# load at the end {Load()}");
        return 0;
    }

    /// <summary>
    /// The named channel's buffer for values of <paramref name="size"/> bytes: room for the 8 MiB the
    /// raw pairs' socket buffers hold, at least 8 values and at most the 256 a writer's credits cover
    /// (<c>CreditGrants.MaxWindow</c>), as a user sizes a stream's buffer to the link.
    /// </summary>
    internal static int BufferFor(int size) => Math.Clamp((8 << 20) / size, 8, 256);

    private static string Load() => File.Exists("/proc/loadavg") ? string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ')[..3]) : "unknown";

    /// <summary>
    /// The runtime's switch that runs socket completions on the socket engine's threads instead of
    /// queueing each to the ThreadPool (docs/DISTRIBUTED.md advises it for programs that stream
    /// large values); given to every pair, baselines included, as <c>--socket-completions</c> says.
    /// </summary>
    internal const string InlineCompletions = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

    /// <summary>
    /// The GC settings docs/DISTRIBUTED.md advises for programs that move large values, given to
    /// every pair, baselines included: the named reader gets a new array per value, which on the
    /// large object heap would cost page faults that the raw readers' reused buffer does not.
    /// </summary>
    private static readonly KeyValuePair<string, string>[] LargeValueGc =
    [
        new("DOTNET_GCRegionSize", "0x2000000"),
        new("DOTNET_GCLOHThreshold", "0x1000000"),
        new("DOTNET_GCGen0MaxBudget", "0x4000000"),
    ];

    /// <summary>
    /// Runs a reader on host 1 and a writer on host 2, both with <paramref name="environment"/>; the
    /// reader's MB/s, the milliseconds its JIT compiled while it measured (next to none, once warm)
    /// and the seconds it warmed up. Prints what a value cost the reader.
    /// </summary>
    private static async Task<(double MBps, double JitMs, double Warmed)> PairAsync(Cluster cluster, string label, KeyValuePair<string, string>[] environment, string[] reader, string[] writer)
    {
        await using Child read = cluster.StartRole(1, reader[0], environment, reader[1..]);
        await read.WaitForAsync("ready", TimeSpan.FromMinutes(1));
        await using Child write = cluster.StartRole(2, writer[0], environment, writer[1..]);
        string[] line = (await read.WaitForAsync("fill ", TimeSpan.FromMinutes(2))).Split(' ');
        Console.WriteLine($"# {label}: per value read, the reader's {line[4]} µs of CPU ({line[5]} µs in user mode), {line[6]} ThreadPool work items, {line[7]} context switches");
        return (double.Parse(line[1], CultureInfo.InvariantCulture), double.Parse(line[2], CultureInfo.InvariantCulture), double.Parse(line[3], CultureInfo.InvariantCulture));
    }

    private static string Size(int bytes) => bytes >= 1 << 20 ? $"{bytes >> 20} MB" : bytes >= 1 << 10 ? $"{bytes >> 10} KB" : $"{bytes} B";

    /// <summary>The reader of a buffered named channel: counts bytes for <paramref name="seconds"/> after <paramref name="warmup"/> seconds of warm-up.</summary>
    internal static async Task<int> NamedReadAsync(CspNodeOptions options, string name, int buffer, int seconds, int warmup)
    {
        await using CspNode node = await CspNode.StartAsync(options);
        AltingChannelIn<byte[]> input = await node.GetOne2OneInAsync(name, new FifoBuffer<byte[]>(buffer));
        Console.WriteLine("ready");
        return await MeasureAsync(seconds, warmup, async () => (await input.ReadAsync()).Length);
    }

    /// <summary>The writer: one value of <paramref name="size"/> bytes, written again and again.</summary>
    internal static async Task<int> NamedWriteAsync(CspNodeOptions options, string name, int size)
    {
        await using CspNode node = await CspNode.StartAsync(options);
        AltingChannelOut<byte[]> output = await node.GetOne2OneOutAsync<byte[]>(name);
        byte[] value = new byte[size];
        Random.Shared.NextBytes(value);
        while (true)
        {
            await output.WriteAsync(value);
        }
    }

    /// <summary>
    /// Raw TCP's reader: length-prefixed frames into one reused buffer (over TLS with the host's
    /// certificate when <paramref name="tls"/> is set), counted as <see cref="NamedReadAsync"/> counts.
    /// </summary>
    internal static async Task<int> TcpReadAsync(string address, X509Certificate2? tls, int seconds, int warmup)
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        listener.ReceiveBufferSize = 8 << 20;
        listener.Bind(new IPEndPoint(IPAddress.Parse(address), Port));
        listener.Listen();
        Console.WriteLine("ready");
        using Socket socket = await listener.AcceptAsync();
        socket.NoDelay = true;
        Stream stream = new NetworkStream(socket, ownsSocket: false);
        if (tls is not null)
        {
            var ssl = new SslStream(stream);
            await ssl.AuthenticateAsServerAsync(tls);
            stream = ssl;
        }

        byte[] header = new byte[4];
        byte[] buffer = [];
        return await MeasureAsync(seconds, warmup, async () =>
        {
            await stream.ReadExactlyAsync(header);
            int length = BinaryPrimitives.ReadInt32LittleEndian(header);
            if (buffer.Length < length)
            {
                buffer = new byte[length];
            }

            await stream.ReadExactlyAsync(buffer.AsMemory(0, length));
            return length;
        });
    }

    /// <summary>Raw TCP's writer: the same frame again and again, NoDelay, large socket buffers.</summary>
    internal static async Task<int> TcpWriteAsync(string peer, X509Certificate2? authority, int size)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, SendBufferSize = 8 << 20 };
        await socket.ConnectAsync(IPAddress.Parse(peer), Port);
        Stream stream = new NetworkStream(socket, ownsSocket: false);
        if (authority is not null)
        {
            // As the named channel checks it: the rig's authority alone, for the address dialled.
            var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
            policy.CustomTrustStore.Add(authority);
            var ssl = new SslStream(stream);
            await ssl.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = peer, CertificateChainPolicy = policy });
            stream = ssl;
        }

        byte[] frame = new byte[4 + size];
        BinaryPrimitives.WriteInt32LittleEndian(frame, size);
        Random.Shared.NextBytes(frame.AsSpan(4));
        while (true)
        {
            await stream.WriteAsync(frame);
        }
    }

    /// <summary>The most JIT time one second of warm-up may still take for the program to count as warm.</summary>
    private static readonly TimeSpan QuietJit = TimeSpan.FromMilliseconds(20);

    /// <summary>
    /// Counts what <paramref name="receive"/> brings for <paramref name="seconds"/>, after a warm-up
    /// of at least <paramref name="warmup"/> seconds that goes on (at most a minute in all) until a
    /// second passes in which the JIT compiled for less than <see cref="QuietJit"/>: tiered
    /// compilation recompiles the hot paths for seconds, and the named pair runs far more code
    /// (TLS, HTTP/2, gRPC, the channel) than the raw ones. Prints the rate, the JIT time while
    /// measuring, the warm-up's length, and per value the CPU time (all and in user mode), the
    /// ThreadPool work items and the context switches.
    /// </summary>
    private static async Task<int> MeasureAsync(int seconds, int warmup, Func<Task<int>> receive)
    {
        long warming = Stopwatch.GetTimestamp();
        await ReceiveForAsync(TimeSpan.FromSeconds(warmup), receive);
        while (Stopwatch.GetElapsedTime(warming) < TimeSpan.FromMinutes(1))
        {
            TimeSpan compiled = System.Runtime.JitInfo.GetCompilationTime();
            await ReceiveForAsync(TimeSpan.FromSeconds(1), receive);
            if (System.Runtime.JitInfo.GetCompilationTime() - compiled < QuietJit)
            {
                break;
            }
        }

        double warmed = Stopwatch.GetElapsedTime(warming).TotalSeconds;
        long bytes = 0;
        long values = 0;
        TimeSpan jitBefore = System.Runtime.JitInfo.GetCompilationTime();
        (TimeSpan cpuBefore, TimeSpan userBefore) = Cpu();
        long switchesBefore = Switches();
        long workItemsBefore = ThreadPool.CompletedWorkItemCount;
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start).TotalSeconds < seconds)
        {
            bytes += await receive();
            values++;
        }

        double rate = bytes / Stopwatch.GetElapsedTime(start).TotalSeconds / 1e6;
        double jitMs = (System.Runtime.JitInfo.GetCompilationTime() - jitBefore).TotalMilliseconds;
        (TimeSpan cpuAfter, TimeSpan userAfter) = Cpu();
        double cpuPerValue = (cpuAfter - cpuBefore).TotalMicroseconds / values;
        double userPerValue = (userAfter - userBefore).TotalMicroseconds / values;
        double workItemsPerValue = (ThreadPool.CompletedWorkItemCount - workItemsBefore) / (double)values;
        double switchesPerValue = (Switches() - switchesBefore) / (double)values;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"fill {rate:0.0} {jitMs:0.0} {warmed:0.0} {cpuPerValue:0.0} {userPerValue:0.0} {workItemsPerValue:0.00} {switchesPerValue:0.00}"));
        return 0;
    }

    /// <summary>This program's CPU time so far: all of it, and in user mode.</summary>
    private static (TimeSpan Total, TimeSpan User) Cpu()
    {
        using Process self = Process.GetCurrentProcess();
        return (self.TotalProcessorTime, self.UserProcessorTime);
    }

    /// <summary>The context switches of this program's threads so far (voluntary and not), from /proc.</summary>
    private static long Switches()
    {
        long total = 0;
        foreach (string task in Directory.GetDirectories("/proc/self/task"))
        {
            foreach (string line in File.ReadAllLines(Path.Combine(task, "status")))
            {
                if (line.Contains("ctxt_switches", StringComparison.Ordinal))
                {
                    total += long.Parse(line.Split(':')[1].Trim(), CultureInfo.InvariantCulture);
                }
            }
        }

        return total;
    }

    private static async Task ReceiveForAsync(TimeSpan duration, Func<Task<int>> receive)
    {
        long start = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(start) < duration)
        {
            await receive();
        }
    }
}
