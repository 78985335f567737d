using System.Diagnostics;
using System.Globalization;
using CspNet.NameServer;
using CspNet.Remote.Tests.Named;
using CspNet.Remote.Tests.NameServer;
using Grpc.Health.V1;
using Grpc.Net.Client;

namespace CspNet.Remote.Tests.Services;

/// <summary>
/// The NameServer and WorkerPoolService programs as an operator runs them: from their published
/// output alone, configured by environment and command line, started as systemd would start a
/// Type=notify unit, checked with the gRPC health client, and stopped by SIGTERM (what systemd and
/// `docker stop` send) with a clean exit. Children are killed whatever happens (ChildNode).
/// </summary>
/// <remarks>
/// Microsoft.Extensions.Hosting.Systemd believes it runs under systemd when its parent process is
/// called "systemd" (or it is PID 1 with NOTIFY_SOCKET set): the stand-in is a shell script of that
/// name that starts the service as its child and waits for it. A real systemd is not available here.
/// </remarks>
[Collection(ServicePrograms.Name)]
public sealed class ServiceProcessTests(PublishedServices published, TestRegistryFixture registry) : IClassFixture<PublishedServices>, IClassFixture<TestRegistryFixture>
{
    private const int Timeout = 60_000;
    private const string ListeningMarker = "Now listening on: ";
    private const string ShuttingDown = "Application is shutting down...";
    private const string ServicePidMarker = "service pid ";

    [Fact(Timeout = Timeout)]
    public async Task NameServer_PublishedUnderSystemdStandIn_NotifiesReadyServesHealthAndStopsCleanlyOnSigterm()
    {
        if (!OperatingSystem.IsLinux())
        {
            return; // systemd, SIGTERM and kill(1): what this test is about exists on Linux only.
        }

        ProcessStartInfo start = SystemdStandIn(Path.Combine(published.NameServer, "cspnet-nameserver.dll"), "--port", "0");
        start.Environment["CSPNET_ADDRESS"] = "127.0.0.1";

        await RunAndStopAsync(start, static _ => Task.CompletedTask);
    }

    [Fact(Timeout = Timeout)]
    public async Task WorkerPool_PublishedUnderSystemdStandIn_RegistersAtTheTestsNameServerServesHealthAndStopsCleanlyOnSigterm()
    {
        if (!OperatingSystem.IsLinux())
        {
            return; // systemd, SIGTERM and kill(1): what this test is about exists on Linux only.
        }

        await using NameServerHost names = await registry.StartNameServerAsync(new NameServerHostOptions { Port = 0 });
        ProcessStartInfo start = SystemdStandIn(
            Path.Combine(published.WorkerPool, "cspnet-workerpool.dll"), "--port", "0", "--nameserver", names.Uri.ToString(), "--workers", "1");
        start.Environment["CSPNET_WorkerPool__Name"] = "published-pool";

        // Logged once the pool is registered at the NameServer.
        await RunAndStopAsync(start, static service => service.SeenOrWaitForTextAsync("Worker pool 'published-pool' listening at"));
    }

    /// <summary>
    /// Starts the service under the stand-in with a notification socket, waits for READY=1 and its
    /// listening line, runs <paramref name="whileRunning"/>, checks health, sends SIGTERM, and checks
    /// STOPPING=1, the shutdown log line and exit code 0.
    /// </summary>
    private static async Task RunAndStopAsync(ProcessStartInfo start, Func<ChildNode, Task> whileRunning)
    {
        using var notify = new NotifySocket(start.WorkingDirectory);
        Task<string> ready = notify.ReceiveUntilAsync("READY=1");
        start.Environment["NOTIFY_SOCKET"] = notify.Path;
        await using ChildNode service = ChildNode.Start(start);
        int pid = ServicePid(await service.WaitForTextAsync(ServicePidMarker));
        Uri address = ListeningAddress(await service.SeenOrWaitForTextAsync(ListeningMarker));

        string readyMessage = await ready.WaitAsync(TimeSpan.FromSeconds(30));
        await whileRunning(service);
        HealthCheckResponse.Types.ServingStatus health = await HealthAsync(address);
        Task<string> stopping = notify.ReceiveUntilAsync("STOPPING=1");
        await SendSigtermAsync(pid);
        await service.SeenOrWaitForTextAsync(ShuttingDown);
        string stoppingMessage = await stopping.WaitAsync(TimeSpan.FromSeconds(30));
        int exitCode = await service.ExitAsync();

        Assert.Contains("READY=1", readyMessage, StringComparison.Ordinal);
        Assert.Equal(HealthCheckResponse.Types.ServingStatus.Serving, health);
        Assert.Contains("STOPPING=1", stoppingMessage, StringComparison.Ordinal);
        Assert.Equal(0, exitCode);
    }

    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    private ProcessStartInfo SystemdStandIn(string program, params string[] arguments)
    {
        string script = Path.Combine(published.Scratch, "systemd");
        if (!File.Exists(script))
        {
            // Exits with the service's exit code; prints the service's pid, which gets the SIGTERM.
            File.WriteAllText(script, "#!/bin/sh\n\"$@\" &\necho \"" + ServicePidMarker + "$!\"\nwait $!\n");
            File.SetUnixFileMode(script, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }

        // Started in a folder of its own, as a service is (in /): the program finds its files beside itself.
        var start = new ProcessStartInfo(script) { WorkingDirectory = published.Scratch };
        start.ArgumentList.Add(BuildOutput.DotNetExecutable());
        start.ArgumentList.Add(program);
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        return start;
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
        int.Parse(line[(line.IndexOf(ServicePidMarker, StringComparison.Ordinal) + ServicePidMarker.Length)..].Trim(), CultureInfo.InvariantCulture);

    private static Uri ListeningAddress(string line) => new(line[(line.IndexOf(ListeningMarker, StringComparison.Ordinal) + ListeningMarker.Length)..].Trim());
}
