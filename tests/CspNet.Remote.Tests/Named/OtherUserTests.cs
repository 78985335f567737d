using System.Diagnostics;
using CspNet.NameServer;
using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.NameServer;
using CspNet.Remote.Workers;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// The boundary between the users of one machine: with no configuration, a NameServer, a program
/// and a worker pool serve only programs of the user that runs them. Another OS user is made for
/// the test (so it runs as root, as CI does) and removed after.
/// </summary>
public sealed class OtherUserTests(TestRegistryFixture registry) : IClassFixture<TestRegistryFixture>
{
    [SecondUserFact(Timeout = 120_000)]
    public async Task DefaultConfiguration_AnotherLocalUser_IsRefusedEverything()
    {
        await using NameServerHost nameServer = await registry.StartNameServerAsync();
        await using CspNode owner = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = "owner" });
        AltingChannelIn<int> input = await owner.GetOne2OneInAsync<int>("guarded");
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(new WorkerPoolOptions { Name = "owners-pool", Workers = 1, NameServer = nameServer.Uri });
        using var user = new SecondUser();

        await using ChildNode stranger = ChildNode.Start(user.StartInfo(
            BuildOutput.DotNetExecutable(),
            BuildOutput.ProgramPath(Path.Combine("tests", "CspNet.Remote.TestNode"), "CspNet.Remote.TestNode"),
            nameServer.Uri.ToString(), "stranger", owner.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), nameServer.StatusUri!.ToString(), pool.Uri.ToString(), "guarded"));
        (int exitCode, List<string> lines) = await stranger.ExitWithOutputAsync(TimeSpan.FromSeconds(90));

        string output = string.Join('\n', lines);
        Assert.True(exitCode == 0, $"exit code {exitCode}:\n{output}");
        foreach (string attempt in new[] { "join", "resolve", "register", "attach guarded", "submit code", "status page" })
        {
            Assert.True(lines.Any(line => line.StartsWith($"refused {attempt}:", StringComparison.Ordinal)), $"'{attempt}' was not refused:\n{output}");
        }

        Assert.DoesNotContain("ALLOWED", output, StringComparison.Ordinal);
        Assert.DoesNotContain(lines, line => line.StartsWith("refused status page", StringComparison.Ordinal) && !line.Contains("401", StringComparison.Ordinal));
    }
}

/// <summary>An OS user made for one test (useradd), with a home of its own; disposing removes both.</summary>
internal sealed class SecondUser : IDisposable
{
    internal SecondUser()
    {
        Name = "cspnet" + Guid.NewGuid().ToString("N")[..8];
        Home = Path.Combine(Path.GetTempPath(), Name);
        Run("useradd", "--no-create-home", "--home-dir", Home, "--shell", "/usr/sbin/nologin", "--user-group", Name);
        Run("mkdir", "-m", "0700", Home);
        Run("chown", $"{Name}:{Name}", Home);
    }

    internal string Name { get; }

    internal string Home { get; }

    /// <summary>Whether this process can make users (root, with useradd and runuser installed), or why not.</summary>
    internal static string? CannotMakeUsers() =>
        !Environment.IsPrivilegedProcess ? "not running as root: useradd needs it (CI runs these tests as root)"
        : !File.Exists("/usr/sbin/useradd") || !File.Exists("/usr/sbin/runuser") ? "useradd or runuser is missing (apt-get install passwd util-linux)"
        : null;

    /// <summary>Runs <paramref name="program"/> as this user, with a clean environment of its own (its home, no runtime folder of root's).</summary>
    internal ProcessStartInfo StartInfo(string program, params string[] arguments)
    {
        var start = new ProcessStartInfo("/usr/sbin/runuser") { UseShellExecute = false };
        foreach (string argument in new[] { "-u", Name, "--", "/usr/bin/env", "-i", "HOME=" + Home, "DOTNET_CLI_HOME=" + Home, "PATH=/usr/local/bin:/usr/bin:/bin", program })
        {
            start.ArgumentList.Add(argument);
        }

        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        return start;
    }

    public void Dispose()
    {
        // The user's processes have ended (the test waited for them); its files go with its home.
        Run("userdel", "--force", Name);
        Directory.Delete(Home, recursive: true);
    }

    private static void Run(string program, params string[] arguments)
    {
        var start = new ProcessStartInfo(program) { UseShellExecute = false, RedirectStandardError = true };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using Process process = Process.Start(start)!;
        string error = process.StandardError.ReadToEnd();
        process.WaitForExit();
        Assert.True(process.ExitCode == 0, $"{program} {string.Join(' ', arguments)} failed ({process.ExitCode}): {error}");
    }
}

/// <summary>A fact that needs a second OS user: skipped, saying why, where this process cannot make one.</summary>
internal sealed class SecondUserFactAttribute : FactAttribute
{
    public SecondUserFactAttribute()
    {
        if (SecondUser.CannotMakeUsers() is { } why)
        {
            Skip = why;
        }
    }
}
