using System.Globalization;
using CspNet.NameServer;
using CspNet.Remote.Tests.Named;
using CspNet.Remote.Tests.NameServer;

namespace CspNet.Remote.Tests.Interop;

/// <summary>
/// The wire protocol is a contract other languages can keep (docs/PROTOCOL.md): samples/NodeClient,
/// a Node.js client built from the repository's .proto files alone, writes to a named channel that a
/// C# process reads inside an <see cref="Alternative"/>, reads from one a C# process writes, and
/// poisons and is poisoned across the language boundary.
/// </summary>
public sealed class NodeClientTests(TestRegistryFixture registry) : IClassFixture<TestRegistryFixture>
{
    private const int Timeout = 120_000;
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(30);

    [Fact(Timeout = Timeout)]
    public async Task Write_CSharpReaderSelectsWithLocalChannelAndTimer_EveryValueOnceInOrder()
    {
        string[] remote = [.. Enumerable.Range(0, 20).Select(i => $"node-{i}"), "", "é ü 😀", "two words"];
        string[] local = [.. Enumerable.Range(0, 20).Select(i => $"local-{i}")];
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<string> named = await home.GetAny2OneInAsync<string>("from-node");
        var localChannel = new One2OneChannel<string>();
        var timer = new CSTimer();
        var alt = new Alternative([named, localChannel.In, timer]);

        // Nothing written anywhere yet: the timer.
        timer.RelativeTimeOut(20);
        Assert.Equal(2, await alt.PriSelectAsync());

        await using ChildNode client = await NodeClientProgram.StartAsync(system.NameServer, ["write", "from-node", .. remote]);
        Task localWriter = Task.Run(async () =>
        {
            foreach (string value in local)
            {
                await localChannel.Out.WriteAsync(value);
            }
        });

        var fromNode = new List<string>();
        var fromLocal = new List<string>();
        while (fromNode.Count < remote.Length || fromLocal.Count < local.Length)
        {
            timer.RelativeTimeOut(20);
            switch (await alt.FairSelectAsync())
            {
                case 0:
                    fromNode.Add(await named.ReadAsync());
                    break;
                case 1:
                    fromLocal.Add(await localChannel.In.ReadAsync());
                    break;
            }
        }

        await localWriter;
        (int exitCode, List<string> output) = await client.ExitWithOutputAsync(ExitTimeout);
        Assert.True(exitCode == 0, string.Join('\n', output));
        Assert.Equal(remote, fromNode);
        Assert.Equal(local, fromLocal);
    }

    [Fact(Timeout = Timeout)]
    public async Task Read_CSharpWriterWritesInt64s_NodeClientReadsEachExactly()
    {
        long[] values = [0, 1, -1, long.MinValue, long.MaxValue, (1L << 53) + 1, -(1L << 53) - 1];
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelOut<long> output = await home.GetOne2AnyOutAsync<long>("to-node");

        await using ChildNode client = await NodeClientProgram.StartAsync(system.NameServer, "read", "to-node", values.Length.ToString(CultureInfo.InvariantCulture));
        foreach (long value in values)
        {
            // Completes when the node client has taken the value.
            await output.WriteAsync(value);
        }

        (int exitCode, List<string> lines) = await client.ExitWithOutputAsync(ExitTimeout);
        Assert.True(exitCode == 0, string.Join('\n', lines));
        Assert.Equal(values.Select(v => v.ToString(CultureInfo.InvariantCulture)), lines);
    }

    [Fact(Timeout = Timeout)]
    public async Task Poison_NodeClientPoisons_WaitingCSharpReaderFails()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<string> named = await home.GetAny2OneInAsync<string>("poisoned-by-node");
        Task<string> read = named.ReadAsync().AsTask();

        await using ChildNode client = await NodeClientProgram.StartAsync(system.NameServer, "poison", "poisoned-by-node");

        // The client exits only once the home has handled its frames, the poison included.
        (int exitCode, List<string> lines) = await client.ExitWithOutputAsync(ExitTimeout);
        Assert.True(exitCode == 0, string.Join('\n', lines));
        await Assert.ThrowsAsync<PoisonException>(() => read);
    }

    [Fact(Timeout = Timeout)]
    public async Task Poison_CSharpReaderPoisonsAfterOneValue_NodeWriterFailsPoisoned()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelIn<string> named = await home.GetAny2OneInAsync<string>("poisoned-by-reader");

        await using ChildNode client = await NodeClientProgram.StartAsync(system.NameServer, "write", "poisoned-by-reader", "first", "second", "third");
        Assert.Equal("first", await named.ReadAsync());
        named.Poison();

        (int exitCode, List<string> lines) = await client.ExitWithOutputAsync(ExitTimeout);
        Assert.True(exitCode == 3, $"exit code {exitCode}, expected 3 (poisoned):\n{string.Join('\n', lines)}");
        Assert.Contains(lines, line => line.StartsWith("stderr: poisoned:", StringComparison.Ordinal));
    }

    [Fact(Timeout = Timeout)]
    public async Task Poison_CSharpWriterPoisonsAfterValues_NodeReaderGetsThemThenFailsPoisoned()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        AltingChannelOut<string> output = await home.GetOne2AnyOutAsync<string>("poisoned-by-writer");

        await using ChildNode client = await NodeClientProgram.StartAsync(system.NameServer, "read", "poisoned-by-writer", "10");
        await output.WriteAsync("a");
        await output.WriteAsync("b");
        output.Poison();

        (int exitCode, List<string> lines) = await client.ExitWithOutputAsync(ExitTimeout);
        Assert.True(exitCode == 3, $"exit code {exitCode}, expected 3 (poisoned):\n{string.Join('\n', lines)}");
        Assert.Equal(["\"a\"", "\"b\""], lines.Where(line => !line.StartsWith("stderr:", StringComparison.Ordinal)));
        Assert.Contains(lines, line => line.StartsWith("stderr: poisoned:", StringComparison.Ordinal));
    }

    [Fact(Timeout = Timeout)]
    public async Task Read_Any2OneChannel_NodeClientRefusedSayingOnlyTheHomeReads()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        _ = await home.GetAny2OneInAsync<string>("home-reads");

        await using ChildNode client = await NodeClientProgram.StartAsync(system.NameServer, "read", "home-reads", "1");

        (int exitCode, List<string> lines) = await client.ExitWithOutputAsync(ExitTimeout);
        Assert.True(exitCode == 1, $"exit code {exitCode}, expected 1 (failed):\n{string.Join('\n', lines)}");
        Assert.Contains(lines, line => line.Contains("FAILED_PRECONDITION", StringComparison.Ordinal) && line.Contains("only reading end", StringComparison.Ordinal));
    }

    [Fact(Timeout = Timeout)]
    public async Task Write_KeyedCluster_NodeClientWithTheKeyWritesAndWithoutIsRefused()
    {
        var hostOptions = new NameServerHostOptions { Port = 0 };
        hostOptions.NameServer.ClusterKey = "s3cret";
        await using NameServerHost nameServer = await registry.StartNameServerAsync(hostOptions);
        await using CspNode home = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, ClusterKey = "s3cret", ProgramLabel = "home" });
        AltingChannelIn<int> input = await home.GetAny2OneInAsync<int>("keyed");

        using var keys = new KeyFiles();
        await using (ChildNode stranger = await NodeClientProgram.StartAsync(nameServer.Uri, "--cluster-key-file", keys.Write("wrong"), "--wait-ms", "0", "write", "keyed", "1"))
        {
            (int exitCode, List<string> lines) = await stranger.ExitWithOutputAsync(ExitTimeout);
            Assert.True(exitCode == 1, $"exit code {exitCode}, expected 1 (failed):\n{string.Join('\n', lines)}");
            Assert.Contains(lines, line => line.Contains("UNAUTHENTICATED", StringComparison.Ordinal));
        }

        await using ChildNode client = await NodeClientProgram.StartAsync(nameServer.Uri, "--cluster-key-file", keys.Write("s3cret"), "write", "keyed", "-2147483648", "2147483647");
        Assert.Equal(int.MinValue, await input.ReadAsync());
        Assert.Equal(int.MaxValue, await input.ReadAsync());
        (int code, List<string> output) = await client.ExitWithOutputAsync(ExitTimeout);
        Assert.True(code == 0, string.Join('\n', output));
    }

    [Fact(Timeout = Timeout)]
    public async Task CommandLine_ClusterKeyOnTheCommandLine_RefusedSayingWhatToUse()
    {
        await using ChildNode client = await NodeClientProgram.StartAsync(new Uri("http://127.0.0.1:9"), "--cluster-key", "s3cret", "write", "keyed", "1");

        (int exitCode, List<string> lines) = await client.ExitWithOutputAsync(ExitTimeout);

        Assert.True(exitCode == 2, $"exit code {exitCode}, expected 2 (bad usage):\n{string.Join('\n', lines)}");
        Assert.Contains(lines, line => line.Contains("--cluster-key-file", StringComparison.Ordinal));
    }
}
