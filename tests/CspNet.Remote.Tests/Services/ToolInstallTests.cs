using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Services;

/// <summary>
/// The NameServer and the worker pool installed as .NET tools from the locally packed feed
/// (<see cref="InstalledTools"/>), run as a package user runs them: they answer --help, refuse a
/// secret on the command line, and serve: the pool registers at the NameServer, and two programs
/// find each other's channel through it. Every tool started is killed whatever happens (ChildNode).
/// </summary>
[Collection(ServicePrograms.Name)]
public sealed class ToolInstallTests(InstalledTools tools) : IClassFixture<InstalledTools>
{
    private const int Timeout = 60_000;
    private const string ListeningMarker = "Now listening on: ";

    [Theory(Timeout = Timeout)]
    [InlineData("cspnet-nameserver", "--cluster-key-file")]
    [InlineData("cspnet-workerpool", "--token-file")]
    public async Task InstalledTool_Help_ListsItsOptionsAndWhereSecretsComeFrom(string command, string secretOption)
    {
        await using ChildNode tool = ChildNode.Start(tools.StartInfo(Installed(command), "--help"));

        (int exitCode, List<string> lines) = await tool.ExitWithOutputAsync(TimeSpan.FromSeconds(30));

        string help = string.Join('\n', lines);
        Assert.Equal(0, exitCode);
        Assert.StartsWith($"{command}: ", help, StringComparison.Ordinal);
        Assert.Contains("--port PORT", help, StringComparison.Ordinal);
        Assert.Contains(secretOption + " PATH", help, StringComparison.Ordinal);
        Assert.Contains("never read from the command line", help, StringComparison.Ordinal);
    }

    [Theory(Timeout = Timeout)]
    [InlineData("cspnet-nameserver", "--NameServer:ClusterKey", "CSPNET_NameServer__ClusterKey")]
    [InlineData("cspnet-workerpool", "--token", "CSPNET_WorkerPool__Token")]
    [InlineData("cspnet-workerpool", "--WorkerPool:CertificatePassword", "CSPNET_WorkerPool__CertificatePassword")]
    public async Task InstalledTool_SecretOnTheCommandLine_RefusesToStartAndSaysWhereToPutIt(string command, string secretSwitch, string environmentVariable)
    {
        await using ChildNode tool = ChildNode.Start(tools.StartInfo(Installed(command), "--port", "0", secretSwitch, "not-here"));

        (int exitCode, List<string> lines) = await tool.ExitWithOutputAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(2, exitCode);
        string error = Assert.Single(lines, l => l.Contains("is not read from the command line", StringComparison.Ordinal));
        Assert.Contains(environmentVariable, error, StringComparison.Ordinal);
        Assert.DoesNotContain("not-here", error, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task InstalledTools_NameServerAndPool_PoolRegistersAndProgramsResolveThroughTheNameServer()
    {
        string keyFile = Path.Combine(tools.Scratch, "cluster.key");
        await File.WriteAllTextAsync(keyFile, "tool-test-key\n");
        await using ChildNode nameServer = ChildNode.Start(tools.StartInfo(tools.NameServer, "--port", "0", "--address", "127.0.0.1", "--cluster-key-file", keyFile));
        Uri names = ListeningAddress(await nameServer.WaitForTextAsync(ListeningMarker));

        await using ChildNode pool = ChildNode.Start(tools.StartInfo(
            tools.WorkerPool, "--port", "0", "--nameserver", names.ToString(), "--workers", "1", "--name", "installed-pool", "--cluster-key-file", keyFile));
        await pool.WaitForTextAsync($"Worker pool 'installed-pool' listening at");

        await using CspNode reader = await CspNode.StartAsync(new CspNodeOptions { NameServer = names, ClusterKey = "tool-test-key", ProgramLabel = "reader" });
        await using CspNode writer = await CspNode.StartAsync(new CspNodeOptions { NameServer = names, ClusterKey = "tool-test-key", ProgramLabel = "writer" });
        AltingChannelIn<int> input = await reader.GetOne2OneInAsync<int>("through-the-tool");
        AltingChannelOut<int> output = await writer.GetOne2OneOutAsync<int>("through-the-tool");
        Task written = output.WriteAsync(42).AsTask();

        Assert.Equal(42, await input.ReadAsync());
        await written;
    }

    private string Installed(string command) => command == "cspnet-nameserver" ? tools.NameServer : tools.WorkerPool;

    private static Uri ListeningAddress(string line) => new(line[(line.IndexOf(ListeningMarker, StringComparison.Ordinal) + ListeningMarker.Length)..].Trim());
}
