using System.Diagnostics;
using CspNet.Remote.Tests.Named;
using CspNet.Remote.Tests.Security;

namespace CspNet.Remote.Tests.MultiHost;

/// <summary>
/// The bulk lane between programs on hosts of their own (<see cref="NetworkNamespaceRig"/>): large
/// values cross on the TCP lane inside TLS with the link's certificates (the hosts share a file
/// system, so a home's Unix domain socket would be reachable: the client must still take the TCP
/// lane, as between machines), each value whole, once and in order; with the runtime's socket
/// completions queued to the ThreadPool (its default) and run inline on the socket engine's threads
/// (DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1, which docs/DISTRIBUTED.md advises for streams of
/// large values).
/// </summary>
public sealed class CrossHostLaneTests : IDisposable
{
    private static readonly string ClusterKey = Convert.ToHexString(System.Security.Cryptography.RandomNumberGenerator.GetBytes(16));
    private readonly ClusterCertificates _cluster = new();
    private readonly DirectoryInfo _files = Directory.CreateTempSubdirectory("cspnet-rig-lane-");

    public void Dispose()
    {
        _cluster.Dispose();
        _files.Delete(recursive: true);
    }

    [NetnsTheory(Timeout = 180000)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task NamedChannel_LargeValuesBetweenTwoHosts_TravelOnTheTlsLaneWholeOnceAndInOrder(bool inlineCompletions)
    {
        await using NetworkNamespaceRig rig = await NetworkNamespaceRig.CreateAsync(3);
        await using ChildNode nameServer = await StartNameServerAsync(rig, 0);
        Uri ns = new($"https://{rig.Addresses[0]}:9090");
        string lane = Lane.LaneSwitch.LaneOff ? "none" : "Tls";

        // Plain writes, then a buffered stream (credited writes) of values above the lane's threshold.
        await using ChildNode reader = StartNode(rig, 1, inlineCompletions, ns, "read-bytes", "lane-plain", "1000000", "20");
        await reader.ReadyAsync();
        await using ChildNode writer = StartNode(rig, 2, inlineCompletions, ns, "write-bytes", "lane-plain", "1000000", "20");
        Assert.Equal("done read 20", await reader.WaitForAsync("done"));
        Assert.Equal($"done wrote 20 lane {lane}", await writer.WaitForAsync("done"));

        await using ChildNode streamReader = StartNode(rig, 1, inlineCompletions, ns, "read-bytes", "lane-stream", "300000", "60", "8");
        await streamReader.ReadyAsync();
        await using ChildNode streamWriter = StartNode(rig, 2, inlineCompletions, ns, "write-bytes", "lane-stream", "300000", "60");
        Assert.Equal("done read 60", await streamReader.WaitForAsync("done"));
        Assert.Equal($"done wrote 60 lane {lane}", await streamWriter.WaitForAsync("done"));
    }

    private async Task<ChildNode> StartNameServerAsync(NetworkNamespaceRig rig, int host)
    {
        (string certificate, string key, string authority) = _cluster.FilesFor(rig.Addresses[host], _files.FullName);
        ProcessStartInfo start = rig.InHost(
            host, BuildOutput.DotNetExecutable(),
            [BuildOutput.ProgramPath("NameServer", "cspnet-nameserver"), "--address", rig.Addresses[host], "--port", "9090",
             "--tls-certificate", certificate, "--tls-key", key, "--tls-authority", authority]);
        start.Environment["CSPNET_NameServer__ClusterKey"] = ClusterKey;
        ChildNode nameServer = ChildNode.Start(start);
        await nameServer.WaitForTextAsync("Now listening on:");
        return nameServer;
    }

    private ChildNode StartNode(NetworkNamespaceRig rig, int host, bool inlineCompletions, Uri nameServer, params string[] scenario)
    {
        (string certificate, string key, string authority) = _cluster.FilesFor(rig.Addresses[host], _files.FullName);
        ProcessStartInfo start = rig.InHost(
            host, BuildOutput.DotNetExecutable(), [BuildOutput.ProgramPath(Path.Combine("tests", "CspNet.Remote.TestNode"), "CspNet.Remote.TestNode"), nameServer.ToString(), .. scenario]);
        start.Environment["CSPNET_TEST_ADDRESS"] = rig.Addresses[host];
        start.Environment["CSPNET_CLUSTER_KEY"] = ClusterKey;
        start.Environment["CSPNET_CERTIFICATE_FILE"] = certificate;
        start.Environment["CSPNET_CERTIFICATE_KEY_FILE"] = key;
        start.Environment["CSPNET_TRUSTED_CERTIFICATE_FILE"] = authority;
        start.Environment["DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS"] = inlineCompletions ? "1" : "0";
        return ChildNode.Start(start);
    }
}
