using System.Diagnostics;
using System.Security.Cryptography.X509Certificates;
using CspNet.Remote.Tests.Named;
using CspNet.Remote.Tests.Security;
using Xunit.Abstractions;

namespace CspNet.Remote.Tests.MultiHost;

/// <summary>
/// Programs on hosts of their own (network namespaces on one switch, <see cref="NetworkNamespaceRig"/>),
/// binding and dialling non-loopback addresses: values cross hosts exactly once, a cut cable is a
/// lost program within the peer timeout, a killed NameServer replica is replaced by the next, and
/// a DistParallel whose pool host is cut mid-process ends as docs/WORKERPOOL.md promises.
/// </summary>
public sealed class CrossHostTests(ITestOutputHelper output) : IDisposable
{
    // Every program of the rig (and the NameServer) shares it; it reaches them through the environment only.
    private static readonly string ClusterKey = Convert.ToHexString(System.Security.Cryptography.RandomNumberGenerator.GetBytes(16));

    // The test node's PeerTimeout (tests/CspNet.Remote.TestNode).
    private static readonly TimeSpan PeerTimeout = TimeSpan.FromSeconds(3);

    // The cluster's authority and, per host address, that host's certificate and key as PEM files.
    private readonly ClusterCertificates _cluster = new();
    private readonly DirectoryInfo _files = Directory.CreateTempSubdirectory("cspnet-rig-tls-");

    public void Dispose()
    {
        _cluster.Dispose();
        _files.Delete(recursive: true);
    }

    [NetnsFact(Timeout = 120000)]
    public async Task NamedChannel_ReaderAndWriterOnTwoOtherHosts_EveryValueArrivesOnce()
    {
        await using NetworkNamespaceRig rig = await NetworkNamespaceRig.CreateAsync(3);
        await using ChildNode nameServer = await StartNameServerAsync(rig, 0);
        Uri ns = NameServerUri(rig, 0);

        await using ChildNode reader = StartNode(rig, 1, ns, [], "read", "One2One", "numbers", "10000");
        await reader.ReadyAsync();
        await using ChildNode writer = StartNode(rig, 2, ns, [], "write", "One2One", "numbers", "10000");

        Assert.Equal("done sum 49995000", await reader.WaitForAsync("done"));
        Assert.Equal("done wrote 10000", await writer.WaitForAsync("done"));
    }

    [NetnsFact(Timeout = 120000)]
    public async Task PaperListings_ReaderAndTwoWritersOnHostsOfTheirOwn_SumIsCompleteOverTls()
    {
        await using NetworkNamespaceRig rig = await NetworkNamespaceRig.CreateAsync(4);
        await using ChildNode nameServer = await StartNameServerAsync(rig, 0);
        Uri ns = NameServerUri(rig, 0);

        // Listings 4 and 5 with listing 6's Init(port, nameServerPort, ip, nameServerIp): the key
        // and the certificates reach CspManager.Init through the environment only.
        await using ChildNode reader = StartNode(rig, 1, ns, [], "paper-reader");
        await using ChildNode plus = StartNode(rig, 2, ns, [], "paper-writer", "plus", "100");
        await using ChildNode minus = StartNode(rig, 3, ns, [], "paper-writer", "minus", "50");

        await reader.WaitForAsync("ready");
        await reader.WaitForAsync($"done result {100 * (4950 - 1225)}");
        await plus.WaitForAsync("done wrote 100");
        await minus.WaitForAsync("done wrote 100");
    }

    [NetnsFact(Timeout = 120000)]
    public Task CableCut_MidWrite_BothSidesLoseThePeerAndNoValueIsLostOrDuplicated() => CutMidTransferAsync("read-seq");

    [NetnsFact(Timeout = 120000)]
    public Task CableCut_MidSelect_BothSidesLoseThePeerAndNoValueIsLostOrDuplicated() => CutMidTransferAsync("select-seq");

    [NetnsFact(Timeout = 180000)]
    public async Task NameServerReplica_KilledWhileProgramsRun_NextReplicaServesAndNewLinksWork()
    {
        await using NetworkNamespaceRig rig = await NetworkNamespaceRig.CreateAsync(4);
        string data = Directory.CreateTempSubdirectory("cspnet-rig-etcd-").FullName;
        try
        {
            string etcdUrl = $"http://{rig.Addresses[0]}:2379";
            await using ChildNode etcd = ChildNode.Start(rig.InHost(
                0, "/usr/bin/etcd", "--data-dir", data, "--listen-client-urls", etcdUrl, "--advertise-client-urls", etcdUrl,
                "--listen-peer-urls", "http://127.0.0.1:2380", "--logger", "zap", "--log-outputs", "stderr"));
            await etcd.WaitForTextAsync("serving client traffic");
            string[] registry = ["--registry", "etcd", "--etcd-endpoints", etcdUrl];
            ChildNode first = await StartNameServerAsync(rig, 0, registry);
            await using ChildNode second = await StartNameServerAsync(rig, 3, registry);
            Uri ns = NameServerUri(rig, 0);
            Uri[] replicas = [NameServerUri(rig, 3)];

            await using ChildNode reader = StartNode(rig, 1, ns, replicas, "read", "One2One", "numbers", "1000");
            await reader.ReadyAsync();
            await first.KillAsync();
            await first.DisposeAsync();

            // A program started now finds the first address refusing connections and asks the replica.
            long started = Stopwatch.GetTimestamp();
            await using ChildNode writer = StartNode(rig, 2, ns, replicas, "write", "One2One", "numbers", "1000");
            await writer.ReadyAsync();
            TimeSpan toReady = Stopwatch.GetElapsedTime(started);

            Assert.Equal("done sum 499500", await reader.WaitForAsync("done"));
            Assert.Equal("done wrote 1000", await writer.WaitForAsync("done"));
            output.WriteLine($"A writer started after the first NameServer was killed was linked through the replica {toReady.TotalMilliseconds:0} ms after its start.");
            Assert.True(toReady < TimeSpan.FromSeconds(20), $"The writer took {toReady} to resolve through the replica.");
        }
        finally
        {
            Directory.Delete(data, recursive: true);
        }
    }

    [NetnsFact(Timeout = 180000)]
    public async Task DistParallel_PoolHostCutMidProcess_ItsProcessesThrowWorkerLostTheOthersFinishAndNoValueIsLostOrDuplicated()
    {
        await using NetworkNamespaceRig rig = await NetworkNamespaceRig.CreateAsync(4);
        await using ChildNode nameServer = await StartNameServerAsync(rig, 0);
        Uri ns = NameServerUri(rig, 0);
        await using ChildNode cutPool = await StartPoolAsync(rig, 1, ns, "pool-cut");
        await using ChildNode keptPool = await StartPoolAsync(rig, 2, ns, "pool-kept");

        // Four CountingWriters of 200 values, two on each pool's two workers; the client reads 50
        // of each and stops, so every writer is blocked mid-process on its 51st value.
        await using ChildNode client = StartNode(rig, 3, ns, [], "dist-parallel", "4", "200", "50");
        await client.WaitForAsync("flowing");
        await rig.CutAsync(1);
        long cut = Stopwatch.GetTimestamp();
        client.CloseInput();
        string[] done = (await client.WaitForAsync("done")).Split(' ', 5);
        TimeSpan ended = Stopwatch.GetElapsedTime(cut);

        // The processes had started, so they are not run again: each throws WorkerLostException
        // naming the cut pool; those on the other pool wrote all their values. On every channel the
        // values came in order without a gap or a repeat (the client checks), and a cut writer got
        // exactly its 50 values through, plus the one it was writing if that had crossed already.
        Assert.All(done[4].Split(';'), error => Assert.StartsWith("WorkerLostException@'pool-cut'", error, StringComparison.Ordinal));
        Assert.Equal(2, done[4].Split(';').Length);
        int[] read = [.. done[1].Split(',').Select(v => int.Parse(v, System.Globalization.CultureInfo.InvariantCulture))];
        Assert.Equal(2, read.Count(n => n == 200));
        Assert.Equal(2, read.Count(n => n is 50 or 51));
        Assert.Equal("4", done[2]);
        Assert.Equal("0", done[3]);
        output.WriteLine($"The run ended {ended.TotalMilliseconds:0} ms after the pool host's cable was cut (PeerTimeout {PeerTimeout.TotalMilliseconds:0} ms); values read per channel {done[1]}.");
        Assert.True(ended < PeerTimeout * 3, $"The run ended {ended} after the cut.");
        (int exit, _) = await client.ExitWithOutputAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(0, exit);

        // With the cable back, the cut pool's workers are free again (its processes' writes failed
        // when it lost the client) and a new run uses both pools.
        await rig.RestoreAsync(1);
        // The run starts once the NameServer lists all four workers free (the cut pool reports its
        // own a moment after it noticed its processes were lost), so both pools take two each.
        await using ChildNode again = StartNode(rig, 3, ns, [], "dist-parallel", "4", "200", "0", "4");
        Assert.Equal("done 200,200,200,200 4 0 ok", await again.WaitForAsync("done"));
    }

    private async Task CutMidTransferAsync(string readScenario)
    {
        await using NetworkNamespaceRig rig = await NetworkNamespaceRig.CreateAsync(3);
        await using ChildNode nameServer = await StartNameServerAsync(rig, 0);
        Uri ns = NameServerUri(rig, 0);
        await using ChildNode reader = StartNode(rig, 1, ns, [], readScenario, "One2One", "cut");
        await reader.ReadyAsync();
        await using ChildNode writer = StartNode(rig, 2, ns, [], "write-seq", "One2One", "cut");
        await reader.WaitForAsync("flowing");

        await rig.CutAsync(2);
        long cut = Stopwatch.GetTimestamp();
        string readerDone = await reader.WaitForAsync("done");
        TimeSpan readerNoticed = Stopwatch.GetElapsedTime(cut);
        string writerDone = await writer.WaitForAsync("done");
        TimeSpan writerNoticed = Stopwatch.GetElapsedTime(cut);
        await rig.RestoreAsync(2);

        // A write completes only once the reader has the value, so the writer counts every value
        // the reader got, except perhaps the last, whose answer the cut may have swallowed.
        string[] r = readerDone.Split(' ');
        string[] w = writerDone.Split(' ');
        int read = int.Parse(r[2], System.Globalization.CultureInfo.InvariantCulture);
        int written = int.Parse(w[2], System.Globalization.CultureInfo.InvariantCulture);
        Assert.Equal("PeerLostException", r[3]);
        Assert.Equal("PeerLostException", w[3]);
        Assert.InRange(read - written, 0, 1);
        output.WriteLine($"{readScenario}: read {read}, wrote {written}; the reader noticed the cut after {readerNoticed.TotalMilliseconds:0} ms, the writer after {writerNoticed.TotalMilliseconds:0} ms (PeerTimeout {PeerTimeout.TotalMilliseconds:0} ms)");

        // Both noticed within about the peer timeout: with 3 s, pings checked once a second make it
        // about 6 s on a quiet machine; the bound allows for a loaded one (the printed figure is the measure).
        Assert.True(readerNoticed < PeerTimeout * 3, $"The reader noticed the cut after {readerNoticed}.");
        Assert.True(writerNoticed < PeerTimeout * 3, $"The writer noticed the cut after {writerNoticed}.");

        // With the cable back, the host's new programs link as before.
        await using ChildNode reader2 = StartNode(rig, 1, ns, [], "read", "One2One", "after", "1000");
        await reader2.ReadyAsync();
        await using ChildNode writer2 = StartNode(rig, 2, ns, [], "write", "One2One", "after", "1000");
        Assert.Equal("done sum 499500", await reader2.WaitForAsync("done"));
    }

    private static Uri NameServerUri(NetworkNamespaceRig rig, int host) => new($"https://{rig.Addresses[host]}:9090");

    /// <summary>Starts the NameServer program on <paramref name="host"/>'s address, port 9090 (each host has its own ports), and waits until it listens.</summary>
    private async Task<ChildNode> StartNameServerAsync(NetworkNamespaceRig rig, int host, params string[] arguments)
    {
        (string certificate, string key, string authority) = Files(rig, host);
        ProcessStartInfo start = rig.InHost(
            host, BuildOutput.DotNetExecutable(),
            [BuildOutput.ProgramPath("NameServer", "cspnet-nameserver"), "--address", rig.Addresses[host], "--port", "9090",
             "--tls-certificate", certificate, "--tls-key", key, "--tls-authority", authority, .. arguments]);
        start.Environment["CSPNET_NameServer__ClusterKey"] = ClusterKey;
        ChildNode nameServer = ChildNode.Start(start);
        await nameServer.WaitForTextAsync("Now listening on:");
        return nameServer;
    }

    /// <summary>
    /// Starts the worker pool program (WorkerPoolService) with two workers on <paramref name="host"/>'s
    /// address, port 9091, serving mutual TLS with the host's certificate, and waits until it has registered.
    /// </summary>
    private async Task<ChildNode> StartPoolAsync(NetworkNamespaceRig rig, int host, Uri nameServer, string name)
    {
        (string certificate, string key, string authority) = Files(rig, host);
        string pfx = Path.Combine(_files.FullName, rig.Addresses[host] + ".pfx");
        using (X509Certificate2 pem = X509Certificate2.CreateFromPemFile(certificate, key))
        {
            File.WriteAllBytes(pfx, pem.Export(X509ContentType.Pkcs12));
        }

        ProcessStartInfo start = rig.InHost(
            host, BuildOutput.DotNetExecutable(),
            [BuildOutput.ProgramPath("WorkerPoolService", "cspnet-workerpool"), "--address", rig.Addresses[host], "--port", "9091",
             "--nameserver", nameServer.ToString(), "--workers", "2", "--name", name,
             "--certificate", pfx, "--client-ca", authority, "--trusted-ca", authority, "--WorkerPool:PeerTimeout", PeerTimeout.ToString()]);
        start.Environment["CSPNET_WorkerPool__ClusterKey"] = ClusterKey;
        ChildNode pool = ChildNode.Start(start);
        await pool.WaitForTextAsync("registered at the NameServer");
        return pool;
    }

    /// <summary>
    /// Starts the test node with <paramref name="scenario"/> on <paramref name="host"/>, bound to its
    /// address, with the cluster key and certificates in the environment (as <c>CspManager.Init</c> reads them).
    /// </summary>
    private ChildNode StartNode(NetworkNamespaceRig rig, int host, Uri nameServer, Uri[] replicas, params string[] scenario)
    {
        (string certificate, string key, string authority) = Files(rig, host);
        ProcessStartInfo start = rig.InHost(
            host, BuildOutput.DotNetExecutable(), [BuildOutput.ProgramPath(Path.Combine("tests", "CspNet.Remote.TestNode"), "CspNet.Remote.TestNode"), nameServer.ToString(), .. scenario]);
        start.Environment["CSPNET_TEST_ADDRESS"] = rig.Addresses[host];
        start.Environment["CSPNET_CLUSTER_KEY"] = ClusterKey;
        start.Environment["CSPNET_CERTIFICATE_FILE"] = certificate;
        start.Environment["CSPNET_CERTIFICATE_KEY_FILE"] = key;
        start.Environment["CSPNET_TRUSTED_CERTIFICATE_FILE"] = authority;
        start.Environment["CSPNET_TEST_NAMESERVER_REPLICAS"] = string.Join(',', replicas.Select(r => r.ToString()));
        return ChildNode.Start(start);
    }

    /// <summary>The PEM files of <paramref name="host"/>'s certificate (for its address, server and client use) and of the authority, made on first use.</summary>
    private (string Certificate, string Key, string Authority) Files(NetworkNamespaceRig rig, int host) =>
        _cluster.FilesFor(rig.Addresses[host], _files.FullName);
}
