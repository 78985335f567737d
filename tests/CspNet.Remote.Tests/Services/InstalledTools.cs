using System.Diagnostics;
using System.Text.RegularExpressions;

namespace CspNet.Remote.Tests.Services;

/// <summary>
/// The two service programs as a package user gets them: packed as .NET tools (<c>dotnet pack
/// --no-build</c> of the build the test project made first) into a local feed, then installed
/// with <c>dotnet tool install --tool-path</c> from that feed alone, once for the test class, into
/// a temporary folder deleted afterwards. NuGet's package folder is a temporary one too, so a tool
/// of the same version cached by an earlier run is never installed instead of this build's.
/// </summary>
public sealed partial class InstalledTools : IAsyncLifetime
{
    private static readonly TimeSpan StepLimit = TimeSpan.FromMinutes(2);
    private readonly string _root = Path.Combine(Path.GetTempPath(), "cspnet-tools-" + Guid.NewGuid().ToString("N")[..8]);

    private string Feed => Path.Combine(_root, "feed");

    private string ToolPath => Path.Combine(_root, "tools");

    /// <summary>A folder for the tests' own files (secret files) and the tools' working folder.</summary>
    internal string Scratch => Path.Combine(_root, "scratch");

    /// <summary>The installed <c>cspnet-nameserver</c> command.</summary>
    internal string NameServer => Command("cspnet-nameserver");

    /// <summary>The installed <c>cspnet-workerpool</c> command.</summary>
    internal string WorkerPool => Command("cspnet-workerpool");

    public async Task InitializeAsync()
    {
        Directory.CreateDirectory(Scratch);
        await Task.WhenAll(
            PackAsync(Path.Combine("NameServer", "NameServer.csproj")),
            PackAsync(Path.Combine("WorkerPoolService", "WorkerPoolService.csproj")));

        // The feed alone: the install must not depend on (or pick up a same-named package from) any other source.
        string config = Path.Combine(_root, "nuget.config");
        await File.WriteAllTextAsync(config, $"""
            <configuration>
              <packageSources>
                <clear />
                <add key="packed" value="{Feed}" />
              </packageSources>
            </configuration>
            """);
        var environment = new Dictionary<string, string> { ["NUGET_PACKAGES"] = Path.Combine(_root, "packages") };
        foreach (string package in new[] { "CspNet.NameServer.Tool", "CspNet.WorkerPool.Tool" })
        {
            await DotNetCommand.RunAsync(
                ["tool", "install", package, "--version", PackedVersion(package), "--tool-path", ToolPath, "--configfile", config],
                StepLimit,
                environment);
        }
    }

    public Task DisposeAsync()
    {
        try
        {
            Directory.Delete(_root, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: it is a temporary folder.
        }

        return Task.CompletedTask;
    }

    /// <summary>
    /// How the installed <paramref name="command"/> starts: from its own shim, in the scratch folder,
    /// with the runtime of the dotnet running the tests (the shim looks for it in DOTNET_ROOT).
    /// </summary>
    internal ProcessStartInfo StartInfo(string command, params string[] arguments)
    {
        var start = new ProcessStartInfo(command) { WorkingDirectory = Scratch };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        string dotnet = BuildOutput.DotNetExecutable();
        if (Path.IsPathRooted(dotnet))
        {
            start.Environment["DOTNET_ROOT"] = Path.GetDirectoryName(dotnet)!;
        }

        return start;
    }

    private string Command(string name) => Path.Combine(ToolPath, OperatingSystem.IsWindows() ? name + ".exe" : name);

    private Task PackAsync(string project) =>
        DotNetCommand.RunAsync(
            ["pack", Path.Combine(BuildOutput.RepoRoot, project), "--no-build", "-c", DotNetCommand.Configuration, "-o", Feed, "-nologo", "-v", "q"],
            StepLimit);

    private string PackedVersion(string package)
    {
        string nupkg = Assert.Single(Directory.GetFiles(Feed, package + ".*.nupkg"));
        return VersionPattern().Match(Path.GetFileName(nupkg)[(package.Length + 1)..]).Groups[1].Value;
    }

    [GeneratedRegex(@"^(.+)\.nupkg$")]
    private static partial Regex VersionPattern();
}
