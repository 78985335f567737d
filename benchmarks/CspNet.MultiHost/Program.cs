// Multi-host measurements on one Linux machine (root): every host a network namespace on a
// private bridge (tests/CspNet.Remote.Tests/MultiHost/NetworkNamespaceRig.cs), every program a
// separate OS process, TLS with the cluster's certificates between hosts. README.md beside this
// file gives the commands and the figures.
using System.CommandLine;
using System.Security.Cryptography.X509Certificates;
using CspNet;
using CspNet.MultiHost;
using CspNet.Remote;
using CspNet.Remote.Tests.MultiHost;

if (args is [string role, .. var rest] && role is "node" or "fill-read" or "fill-write" or "tcp-read" or "tcp-write")
{
    // A program the harness started on a rig host (its options come from the harness, not a user).
    return await RunRoleAsync(role, rest);
}

if (NetworkNamespaceRig.SkipReason is { } why && !args.Contains("--help") && !args.Contains("-h"))
{
    Console.Error.WriteLine("error: " + why);
    return 1;
}

string[] memoryOnly = ["memory"], etcdOnly = ["etcd"], bothRegistries = ["memory", "etcd"];
var registry = Cli.Choice("--registry", "where the NameServers keep names", "both", ("memory", memoryOnly), ("etcd", etcdOnly), ("both", bothRegistries));
var hosts = Cli.IntCount("--hosts", "hosts the programs are spread over", 10, 1, 200);
var programs = Cli.IntCount("--programs", "programs (separate OS processes)", 100, 1, 2000);
var channels = Cli.IntCount("--channels", "named channels in all (each program hosts its share)", 1000, 1, 1_000_000);
var values = Cli.IntCount("--values", "values written on every channel in the traffic phase", 100, 1, 1_000_000);
var pools = Cli.IntCount("--pools", "worker pools registered (on the first programs) and looked up by every program", 20, 0, 2000);
var soak = Cli.IntCount("--soak-seconds", "then keep every channel busy this long (0: no soak)", 0, 0, 86_400);
var sample = Cli.IntCount("--sample-seconds", "during the soak, memory sampled this often", 30, 1, 3600);
var atOnce = Cli.IntCount("--at-once", "programs running the register, resolve and look-up phases at a time (default: all); fewer where the programs far outnumber the cores", 2000, 1, 2000);
var peerTimeout = Cli.IntCount("--peer-timeout", "the programs' PeerTimeout in seconds: raise it where the programs far outnumber the cores", 30, 1, 3600);
var scale = new Command("scale", "Register, resolve, traffic and NameServer failover with many programs on many hosts.")
{
    registry, hosts, programs, channels, values, pools, soak, sample, peerTimeout, atOnce,
};
scale.SetAction(result => Cli.Report(async () =>
{
    foreach (string kind in result.GetValue(registry)!.Value)
    {
        await Scale.RunAsync(kind, result.GetValue(hosts), result.GetValue(programs), result.GetValue(channels), result.GetValue(values), result.GetValue(pools), result.GetValue(soak), result.GetValue(sample), result.GetValue(peerTimeout), result.GetValue(atOnce));
    }

    return 0;
}));

var rates = Cli.List("--rates", "link rates for tc tbf, or none", "RATES", text => text);
var sizes = Cli.List("--sizes", "value sizes in bytes", "SIZES", text => (int)Cli.ParseCount(text, 1024, 1, 64 << 20, "--sizes"));
var seconds = Cli.IntCount("--seconds", "seconds measured per figure", 5, 1, 600);
var warmup = Cli.IntCount("--warmup", "seconds of warm-up before each figure", 3, 1, 600);
bool[] laneOn = [true], laneOff = [false], laneBoth = [true, false];
var lane = Cli.Choice("--lane", "the named channel with the bulk lane, without it, or both", "both", ("on", laneOn), ("off", laneOff), ("both", laneBoth));
var completions = Cli.Choice("--socket-completions", "socket completions in every pair's programs: inline on the socket engine's threads (DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1, as docs/DISTRIBUTED.md advises for streams of large values) or queued to the ThreadPool (the runtime's default)", "inline", ("inline", true), ("pool", false));
var fill = new Command("fill", "How much of a (rate-limited) link a buffered named channel fills, beside raw TCP.") { rates, sizes, seconds, warmup, lane, completions };
fill.SetAction(result => Cli.Report(() =>
{
    string[] r = result.GetValue(rates) is { Length: > 0 } given ? given : ["1gbit", "10gbit", "none"];
    int[] s = result.GetValue(sizes) is { Length: > 0 } chosen ? chosen : [64 << 10, 1 << 20, 4 << 20];
    return Fill.RunAsync(r, s, result.GetValue(seconds), result.GetValue(warmup), result.GetValue(lane)!.Value, result.GetValue(completions)!.Value);
}));

return await Cli.RunAsync(
    new RootCommand("Multi-host measurements of CspNet on one machine (needs root).") { scale, fill },
    args,
    "Examples (README.md beside this program):\n"
    + "  sudo dotnet run -c Release --project benchmarks/CspNet.MultiHost -- scale --hosts 10 --programs 100 --channels 1000\n"
    + "  sudo dotnet run -c Release --project benchmarks/CspNet.MultiHost -- fill --rates 1gbit,10gbit");

static async Task<int> RunRoleAsync(string role, string[] rest)
{
    string? Get(string name) => Array.IndexOf(rest, name) is int i and >= 0 && i + 1 < rest.Length ? rest[i + 1] : null;
    int Int(string name) => int.Parse(Get(name)!, System.Globalization.CultureInfo.InvariantCulture);
    string address = Get("--address")!;
    X509Certificate2 certificate = X509Certificate2.CreateFromPemFile(Environment.GetEnvironmentVariable("CSPNET_CERTIFICATE_FILE")!, Environment.GetEnvironmentVariable("CSPNET_CERTIFICATE_KEY_FILE"));
    X509Certificate2 authority = X509CertificateLoader.LoadCertificateFromFile(Environment.GetEnvironmentVariable("CSPNET_TRUSTED_CERTIFICATE_FILE")!);
    CspNodeOptions Options() => new()
    {
        NameServer = new Uri(Get("--nameserver")!),
        Address = address,
        ClusterKey = Environment.GetEnvironmentVariable("CSPNET_CLUSTER_KEY"),
        Certificate = certificate,
        TrustedCertificate = authority,
        LoggerFactory = TraceLog.FromEnvironment(),
        BulkLane = !rest.Contains("--no-lane"),
    };
    try
    {
        return await RunChosenRoleAsync();
    }
    catch (Exception e) when (role.EndsWith("-write", StringComparison.Ordinal) && e is IOException or PoisonException)
    {
        // A writer runs until its reader has measured and gone.
        return 0;
    }

    async Task<int> RunChosenRoleAsync() => role switch
    {
        "node" => await Node.RunAsync(Options(), Get("--replica") is { } replica ? new Uri(replica) : null, Int("--index"), Int("--programs"), Int("--names"), Int("--values"), TimeSpan.FromSeconds(Int("--peer-timeout"))),
        "fill-read" => await Fill.NamedReadAsync(Options(), Get("--name")!, Int("--buffer"), Int("--seconds"), Int("--warmup")),
        "fill-write" => await Fill.NamedWriteAsync(Options(), Get("--name")!, Int("--size")),
        "tcp-read" => await Fill.TcpReadAsync(address, rest.Contains("--tls") ? certificate : null, Int("--seconds"), Int("--warmup")),
        _ => await Fill.TcpWriteAsync(Get("--peer")!, rest.Contains("--tls") ? authority : null, Int("--size")),
    };
}
