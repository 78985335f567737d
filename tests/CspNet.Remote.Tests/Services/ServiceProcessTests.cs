using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;
using System.Text;
using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.Named;
using Grpc.Health.V1;
using Grpc.Net.Client;

namespace CspNet.Remote.Tests.Services;

/// <summary>
/// The NameServer and WorkerPoolService programs as an operator runs them: from their published
/// output alone, configured by environment and command line, checked with the gRPC health client,
/// and stopped by SIGTERM (what systemd and `docker stop` send) with a clean exit. Children are
/// killed whatever happens (ChildNode).
/// </summary>
public sealed class ServiceProcessTests(PublishedServices published) : IClassFixture<PublishedServices>
{
    private const int Timeout = 60_000;
    private const string ListeningMarker = "Now listening on: ";
    private const string ShuttingDown = "Application is shutting down...";

    [Fact(Timeout = Timeout)]
    public async Task NameServer_PublishedUnderSystemdStandIn_NotifiesReadyServesHealthAndStopsCleanlyOnSigterm()
    {
        if (!OperatingSystem.IsLinux())
        {
            return; // systemd, SIGTERM and kill(1): what this test is about exists on Linux only.
        }

        string socketPath = Path.Combine(published.Scratch, "notify-" + Guid.NewGuid().ToString("N")[..8]);
        using var notify = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
        notify.Bind(new UnixDomainSocketEndPoint(socketPath));
        Task<string> ready = ReceiveUntilAsync(notify, "READY=1");

        // Microsoft.Extensions.Hosting.Systemd believes it runs under systemd when its parent
        // process is called "systemd" (or it is PID 1 with NOTIFY_SOCKET set): the stand-in is a
        // shell script of that name that starts the service as its child and waits for it.
        ProcessStartInfo start = SystemdStandIn(Path.Combine(published.NameServer, "CspNet.NameServer.dll"), "--port", "0");
        start.Environment["NOTIFY_SOCKET"] = socketPath;
        start.Environment["CSPNET_ADDRESS"] = "127.0.0.1";
        await using ChildNode service = ChildNode.Start(start);
        int pid = ServicePid(await service.WaitForTextAsync("service pid "));
        Uri address = ListeningAddress(await service.WaitForTextAsync(ListeningMarker));

        string readyMessage = await ready.WaitAsync(TimeSpan.FromSeconds(30));
        HealthCheckResponse.Types.ServingStatus health = await HealthAsync(address);
        Task<string> stopping = ReceiveUntilAsync(notify, "STOPPING=1");
        await SendSigtermAsync(pid);
        await service.SeenOrWaitForTextAsync(ShuttingDown);
        string stoppingMessage = await stopping.WaitAsync(TimeSpan.FromSeconds(30));
        int exitCode = await service.ExitAsync();

        Assert.Contains("READY=1", readyMessage, StringComparison.Ordinal);
        Assert.Equal(HealthCheckResponse.Types.ServingStatus.Serving, health);
        Assert.Contains("STOPPING=1", stoppingMessage, StringComparison.Ordinal);
        Assert.Equal(0, exitCode);
    }

    [Fact(Timeout = Timeout)]
    public async Task WorkerPool_Published_RegistersAtTheTestsNameServerServesHealthAndStopsCleanlyOnSigterm()
    {
        if (!OperatingSystem.IsLinux())
        {
            return; // SIGTERM and kill(1) are Unix's; the Windows service manager stops services otherwise.
        }

        await using NameServerHost names = await NameServerHost.StartAsync(new NameServerHostOptions { Port = 0 });
        var start = new ProcessStartInfo(BuildOutput.DotNetExecutable())
        {
            ArgumentList = { Path.Combine(published.WorkerPool, "CspNet.WorkerPoolService.dll"), "--port", "0", "--nameserver", names.Uri.ToString(), "--workers", "1" },
            WorkingDirectory = published.Scratch,
        };
        start.Environment["CSPNET_WorkerPool__Name"] = "published-pool";
        await using ChildNode service = ChildNode.Start(start);
        Uri address = ListeningAddress(await service.WaitForTextAsync(ListeningMarker));
        await service.SeenOrWaitForTextAsync("Worker pool 'published-pool' listening at");

        HealthCheckResponse.Types.ServingStatus health = await HealthAsync(address);
        await SendSigtermAsync(service.Id);
        await service.SeenOrWaitForTextAsync(ShuttingDown);
        int exitCode = await service.ExitAsync();

        Assert.Equal(HealthCheckResponse.Types.ServingStatus.Serving, health);
        Assert.Equal(0, exitCode);
    }

    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    private ProcessStartInfo SystemdStandIn(string program, params string[] arguments)
    {
        string script = Path.Combine(published.Scratch, "systemd");
        if (!File.Exists(script))
        {
            File.WriteAllText(script, "#!/bin/sh\n\"$@\" &\necho \"service pid $!\"\nwait $!\n");
            File.SetUnixFileMode(script, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }

        var start = new ProcessStartInfo(script) { WorkingDirectory = published.Scratch };
        start.ArgumentList.Add(BuildOutput.DotNetExecutable());
        start.ArgumentList.Add(program);
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        return start;
    }

    private static async Task<string> ReceiveUntilAsync(Socket socket, string state)
    {
        byte[] buffer = new byte[4096];
        var received = new StringBuilder();
        while (true)
        {
            int length = await socket.ReceiveAsync(buffer, SocketFlags.None);
            string message = Encoding.UTF8.GetString(buffer, 0, length);
            received.AppendLine(message);
            if (message.Split('\n').Contains(state))
            {
                return received.ToString();
            }
        }
    }

    private static async Task<HealthCheckResponse.Types.ServingStatus> HealthAsync(Uri address)
    {
        using GrpcChannel channel = GrpcChannel.ForAddress(address);
        var client = new Health.HealthClient(channel);
        HealthCheckResponse response = await client.CheckAsync(new HealthCheckRequest(), deadline: DateTime.UtcNow.AddSeconds(10));
        return response.Status;
    }

    /// <summary>SIGTERM, as systemd sends it (Process.Kill sends SIGKILL, which no program can handle).</summary>
    private static async Task SendSigtermAsync(int pid)
    {
        using var kill = Process.Start(new ProcessStartInfo("kill", ["-TERM", pid.ToString(CultureInfo.InvariantCulture)]) { UseShellExecute = false })!;
        await kill.WaitForExitAsync();
        Assert.Equal(0, kill.ExitCode);
    }

    private static int ServicePid(string line) =>
        int.Parse(line[(line.IndexOf("service pid ", StringComparison.Ordinal) + "service pid ".Length)..].Trim(), CultureInfo.InvariantCulture);

    private static Uri ListeningAddress(string line) => new(line[(line.IndexOf(ListeningMarker, StringComparison.Ordinal) + ListeningMarker.Length)..].Trim());
}
