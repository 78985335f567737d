using System.Diagnostics;
using Grpc.Core;
using Grpc.Net.Client;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// The standalone NameServer program (NameServer/), run as a child process, with each registry:
/// <see cref="InMemoryNameServerProcessTests"/> (the default, no switch) and
/// <see cref="EtcdNameServerProcessTests"/> (<c>--registry etcd</c>).
/// </summary>
public abstract class NameServerProcessTests
{
    // grpc.health.v1 without its package: HealthCheckRequest{} is empty, HealthCheckResponse{status: SERVING} is field 1 = 1.
    private static readonly Marshaller<byte[]> RawBytes = Marshallers.Create(static b => b, static b => b);
    private static readonly Method<byte[], byte[]> HealthCheck = new(MethodType.Unary, "grpc.health.v1.Health", "Check", RawBytes, RawBytes);
    private static readonly byte[] Serving = [0x08, 0x01];

    /// <summary>The switches that select the registry under test (none: the in-memory default).</summary>
    private protected abstract Task<string[]> RegistryArgumentsAsync();

    [RegistryFact(Timeout = 60000)]
    public async Task Program_StartedOnAFreePort_AnswersHealthCheckServingAndNameServerCalls()
    {
        using Process process = Start(["--port", "0", .. await RegistryArgumentsAsync()]);
        try
        {
            Uri address = await ListeningAddressAsync(process);
            using GrpcChannel channel = UserKey.Channel(address);

            byte[] health = await channel.CreateCallInvoker().AsyncUnaryCall(HealthCheck, null, new CallOptions(deadline: DateTime.UtcNow.AddSeconds(10)), []);
            var client = new Protocol.NameServer.NameServerClient(channel);
            var lease = await client.OpenLeaseAsync(new Protocol.OpenLeaseRequest { Endpoint = new Protocol.Endpoint { Host = "127.0.0.1", Port = 7000 }, Program = "probe" });

            Assert.Equal(Serving, health);
            Assert.Equal(10_000, lease.TtlMs);
        }
        finally
        {
            // No orphan may outlive the test, whatever happened above.
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
        }
    }

    [RegistryFact(Timeout = 60000)]
    public async Task Program_StatusPort_ServesTheStatusPageOverHttp1OnItsOwnEndpoint()
    {
        using Process process = Start(["--port", "0", "--status-port", "0", .. await RegistryArgumentsAsync()]);
        try
        {
            // Kestrel logs both endpoints; one speaks HTTP/2 only (gRPC), the other HTTP/1.1 (the page).
            Uri[] endpoints = [await ListeningAddressAsync(process), await ListeningAddressAsync(process)];
            using var http = UserKey.Http();
            var answers = new List<(System.Net.HttpStatusCode Status, string? Type, string Body)>();
            foreach (Uri endpoint in endpoints)
            {
                using HttpResponseMessage response = await http.GetAsync(new Uri(endpoint, "/status"));
                answers.Add((response.StatusCode, response.Content.Headers.ContentType?.MediaType, await response.Content.ReadAsStringAsync()));
            }

            (System.Net.HttpStatusCode _, string? _, string page) = Assert.Single(answers, a => a.Status == System.Net.HttpStatusCode.OK);
            Assert.Contains(answers, a => a.Type == "text/html");
            Assert.Contains("NameServer", page, StringComparison.Ordinal);
        }
        finally
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
        }
    }

    [RegistryFact(Timeout = 60000)]
    public async Task Program_ClusterKeyOnTheCommandLine_RefusesToStartSayingWhatToUse()
    {
        using Process process = Start(["--port", "0", "--NameServer:ClusterKey", "s3cret", .. await RegistryArgumentsAsync()]);
        try
        {
            string errors = await process.StandardError.ReadToEndAsync();
            await process.WaitForExitAsync();

            Assert.Equal(2, process.ExitCode);
            Assert.Contains("--cluster-key-file", errors, StringComparison.Ordinal);
        }
        finally
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
                await process.WaitForExitAsync();
            }
        }
    }

    [RegistryFact(Timeout = 60000)]
    public async Task Program_StatusPageOnAnyAddressWithoutClusterKey_RefusesToStart()
    {
        using Process process = Start(["--port", "0", "--status-port", "0", "--StatusPage:Address", "0.0.0.0", .. await RegistryArgumentsAsync()]);
        try
        {
            string errors = await process.StandardError.ReadToEndAsync();
            await process.WaitForExitAsync();

            Assert.NotEqual(0, process.ExitCode);
            Assert.Contains("NameServer:ClusterKey", errors, StringComparison.Ordinal);
        }
        finally
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }
        }
    }

    private protected static Process Start(params string[] arguments)
    {
        string program = Path.Combine(RepoRoot(), "NameServer", "bin", Configuration(), TargetFramework(), "cspnet-nameserver.dll");
        Assert.True(File.Exists(program), $"{program} does not exist: build the NameServer project (the test project builds it first).");
        string? dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
        var start = new ProcessStartInfo(!string.IsNullOrEmpty(dotnet) && File.Exists(dotnet) ? dotnet : "dotnet", [program, .. arguments])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["Logging__Console__FormatterName"] = "simple";
        return Process.Start(start)!;
    }

    /// <summary>Reads the log until Kestrel says where it listens: the only way to learn a port the program picked.</summary>
    private protected static async Task<Uri> ListeningAddressAsync(Process process)
    {
        const string Marker = "Now listening on: ";
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (await process.StandardOutput.ReadLineAsync(timeout.Token) is { } line)
        {
            int at = line.IndexOf(Marker, StringComparison.Ordinal);
            if (at >= 0)
            {
                return new Uri(line[(at + Marker.Length)..].Trim());
            }
        }

        throw new InvalidOperationException("The NameServer exited before listening: " + await process.StandardError.ReadToEndAsync());
    }

    private static string Configuration() => new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar)).Parent!.Name;

    private static string TargetFramework() => new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar)).Name;

    private static string RepoRoot()
    {
        for (DirectoryInfo? dir = new(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "CspNet.sln")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException($"CspNet.sln not found above {AppContext.BaseDirectory}.");
    }
}

/// <summary>The program with its default, in-memory registry.</summary>
public sealed class InMemoryNameServerProcessTests : NameServerProcessTests
{
    private protected override Task<string[]> RegistryArgumentsAsync() => Task.FromResult<string[]>([]);
}

/// <summary>The program with <c>--registry etcd</c> on a real etcd, one for the class, each test on a prefix of its own.</summary>
[RequiresEtcd]
public sealed class EtcdNameServerProcessTests(EtcdFixture fixture) : NameServerProcessTests, IClassFixture<EtcdFixture>
{
    private protected override async Task<string[]> RegistryArgumentsAsync() =>
        ["--registry", "etcd", "--etcd-endpoints", (await fixture.GetAsync()).ClientUrl, "--Etcd:Prefix", EtcdNameRegistryTests.NewPrefix()];

    [RegistryFact(Timeout = 60000)]
    public async Task Program_RegistryEtcd_TwoNameServersShareOneTable()
    {
        EtcdProcess etcd = await fixture.GetAsync();
        string prefix = "/e2e/" + Guid.NewGuid().ToString("N") + "/";
        using Process first = Start("--port", "0", "--registry", "etcd", "--etcd-endpoints", etcd.ClientUrl, "--Etcd:Prefix", prefix);
        using Process second = Start("--port", "0", "--registry", "etcd", "--etcd-endpoints", etcd.ClientUrl, "--Etcd:Prefix", prefix);
        try
        {
            using GrpcChannel toFirst = UserKey.Channel(await ListeningAddressAsync(first));
            using GrpcChannel toSecond = UserKey.Channel(await ListeningAddressAsync(second));
            var viaFirst = new Protocol.NameServer.NameServerClient(toFirst);
            var viaSecond = new Protocol.NameServer.NameServerClient(toSecond);

            var lease = await viaFirst.OpenLeaseAsync(new Protocol.OpenLeaseRequest { Endpoint = new Protocol.Endpoint { Host = "127.0.0.1", Port = 7000 }, Program = "producer" });
            var registered = await viaSecond.RegisterAsync(new Protocol.RegisterRequest { LeaseId = lease.LeaseId, Entry = NameServerTestHost.Channel32("numbers") });
            var resolved = await viaFirst.ResolveAsync(new Protocol.ResolveRequest { Name = "numbers" });
            await viaSecond.CloseLeaseAsync(new Protocol.CloseLeaseRequest { LeaseId = lease.LeaseId });
            var gone = await Assert.ThrowsAsync<RpcException>(async () => await viaFirst.ResolveAsync(new Protocol.ResolveRequest { Name = "numbers" }));

            Assert.Equal(10_000, lease.TtlMs);
            Assert.True(registered.Created);
            Assert.Equal(registered.Entry, resolved.Entry);
            Assert.Equal(StatusCode.NotFound, gone.StatusCode);
        }
        finally
        {
            foreach (Process process in new[] { first, second })
            {
                process.Kill(entireProcessTree: true);
                await process.WaitForExitAsync();
            }
        }
    }
}
