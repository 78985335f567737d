using System.Diagnostics;
using System.Globalization;
using System.IO.Compression;
using System.Text;
using Xunit.Abstractions;

namespace CspNet.Tests.QuickStart;

/// <summary>
/// The README quick start (QuickStart.cs.txt next to this file) must compile, unchanged, in the
/// project a newcomer gets from <c>dotnet new console</c> (net10.0, implicit usings, nullable)
/// once it references the CspNet package: in particular <c>Parallel</c> must mean
/// <see cref="CspNet.Parallel"/> there, not System.Threading.Tasks.Parallel. So the tests pack the
/// library into a local feed, restore a fresh console project from it and build it, as a user would.
/// </summary>
/// <remarks>
/// Slow by unit-test standards (two `dotnet` builds, about 10-20 s in all); nothing is fetched
/// from the network: the package source mapping sends CspNet to the local feed and the project
/// needs no other package.
/// Its collection runs alone, after the parallel ones, so that two CPU-heavy builds do not slow
/// down timing-sensitive tests running beside them. Filter it out with
/// <c>--filter "Category!=Slow"</c>.
/// </remarks>
[Collection(nameof(QuickStartBuilds))]
[Trait("Category", "Slow")]
public class QuickStartCompileTests(PackedCspNet package, ITestOutputHelper output) : IClassFixture<PackedCspNet>
{
    private static readonly TimeSpan BuildTimeout = TimeSpan.FromSeconds(180);
    private static readonly TimeSpan AppTimeout = TimeSpan.FromSeconds(30);

    [Fact(Timeout = 240_000)]
    public async Task QuickStart_DefaultConsoleProjectReferencingPackage_CompilesWithoutWarningsAndRuns()
    {
        Assert.True(package.Pack.ExitCode == 0, $"dotnet pack failed:\n{package.Pack.Output}");
        output.WriteLine($"dotnet pack: {package.Pack.Elapsed.TotalSeconds:F1} s");

        string app = Path.Combine(package.WorkDirectory, "app");
        Directory.CreateDirectory(app);
        File.Copy(Path.Combine(package.RepoRoot, "tests", "CspNet.Tests", "QuickStart", "QuickStart.cs.txt"), Path.Combine(app, "Program.cs"));
        File.WriteAllText(Path.Combine(app, "QuickStartApp.csproj"), $"""
            <Project Sdk="Microsoft.NET.Sdk">

              <PropertyGroup>
                <OutputType>Exe</OutputType>
                <TargetFramework>net10.0</TargetFramework>
                <ImplicitUsings>enable</ImplicitUsings>
                <Nullable>enable</Nullable>
              </PropertyGroup>

              <ItemGroup>
                <PackageReference Include="CspNet" Version="[{package.Version}]" />
              </ItemGroup>

            </Project>
            """);
        File.WriteAllText(Path.Combine(app, "nuget.config"), $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <clear />
                <add key="local" value="{package.Feed}" />
                <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
              </packageSources>
              <packageSourceMapping>
                <packageSource key="local">
                  <package pattern="CspNet" />
                </packageSource>
                <packageSource key="nuget.org">
                  <package pattern="*" />
                </packageSource>
              </packageSourceMapping>
            </configuration>
            """);

        // Stop MSBuild's search for Directory.Build.* / Directory.Packages.props above the temp folder.
        foreach (string file in new[] { "Directory.Build.props", "Directory.Build.targets", "Directory.Packages.props" })
        {
            File.WriteAllText(Path.Combine(app, file), "<Project />");
        }

        // TreatWarningsAsErrors: the quick start is copied by newcomers, so it must be warning-free
        // too. NuGetAudit=false: vulnerability data would come from the network and says nothing
        // about whether the code compiles.
        DotNetCli.Result build = await DotNetCli.RunAsync(
            app,
            package.PackagesFolder,
            BuildTimeout,
            "build", Path.Combine(app, "QuickStartApp.csproj"),
            "--disable-build-servers", "-nodeReuse:false",
            "-p:TreatWarningsAsErrors=true", "-p:NuGetAudit=false");
        output.WriteLine($"dotnet build: {build.Elapsed.TotalSeconds:F1} s");
        Assert.True(build.ExitCode == 0, $"The quick start does not build (exit code {build.ExitCode}):\n{build.Output}");

        DotNetCli.Result run = await DotNetCli.RunAsync(
            app,
            package.PackagesFolder,
            AppTimeout,
            Path.Combine(app, "bin", "Debug", "net10.0", "QuickStartApp.dll"));
        output.WriteLine($"running it: {run.Elapsed.TotalSeconds:F1} s");
        output.WriteLine(run.Output);
        Assert.True(run.ExitCode == 0, $"The quick start failed (exit code {run.ExitCode}):\n{run.Output}");
        Assert.Contains("All jobs done.", run.Output, StringComparison.Ordinal);
        Assert.Equal(10, run.Output.Split('\n').Count(line => line.Contains(" squared is ", StringComparison.Ordinal)));
    }

    [Fact]
    public void Readme_QuickStartListing_IsTheFileThatIsBuilt()
    {
        string readme = File.ReadAllText(Path.Combine(package.RepoRoot, "README.md")).ReplaceLineEndings("\n");
        const string Open = "```csharp\n";
        int start = readme.IndexOf(Open, StringComparison.Ordinal) + Open.Length;
        Assert.True(start >= Open.Length, "README.md has no csharp block: the quick start is its first.");
        string listing = readme[start..readme.IndexOf("```", start, StringComparison.Ordinal)];

        Assert.Equal(File.ReadAllText(Path.Combine(package.RepoRoot, "tests", "CspNet.Tests", "QuickStart", "QuickStart.cs.txt")).ReplaceLineEndings("\n"), listing);
    }

    [Fact]
    public void Pack_Package_HoldsAssemblyDocumentationAndBuildProps()
    {
        Assert.True(package.Pack.ExitCode == 0, $"dotnet pack failed:\n{package.Pack.Output}");
        string nupkg = Assert.Single(Directory.GetFiles(package.Feed, "*.nupkg"));

        using ZipArchive archive = ZipFile.OpenRead(nupkg);
        string[] entries = archive.Entries.Select(e => e.FullName).ToArray();

        Assert.Contains("lib/net10.0/CspNet.dll", entries);
        Assert.Contains("build/CspNet.props", entries);
        Assert.Contains("buildTransitive/CspNet.props", entries);

        // IntelliSense for package users comes from this file.
        Assert.True(
            entries.Contains("lib/net10.0/CspNet.xml"),
            "The package has no XML documentation (lib/net10.0/CspNet.xml). Entries: " + string.Join(", ", entries));
    }
}

/// <summary>Runs the quick-start tests on their own, not alongside other test classes.</summary>
[CollectionDefinition(nameof(QuickStartBuilds), DisableParallelization = true)]
public sealed class QuickStartBuilds;

/// <summary>
/// Packs src/CspNet once for the test class into a temporary local feed, with a unique
/// prerelease version and its own intermediate folders (so that it neither disturbs nor is
/// disturbed by the repository's own build output).
/// </summary>
public sealed class PackedCspNet : IAsyncLifetime
{
    private static readonly TimeSpan PackTimeout = TimeSpan.FromSeconds(180);

    public PackedCspNet()
    {
        RepoRoot = FindRepoRoot();
        WorkDirectory = Path.Combine(Path.GetTempPath(), "cspnet-quickstart-" + Guid.NewGuid().ToString("N"));
        Feed = Path.Combine(WorkDirectory, "feed");
        PackagesFolder = Path.Combine(WorkDirectory, "packages");
        Version = $"0.0.0-quickstart.{DateTime.UtcNow:yyyyMMddHHmmss}";
    }

    /// <summary>The folder holding CspNet.sln.</summary>
    public string RepoRoot { get; }

    /// <summary>Temporary folder for everything the tests write; deleted afterwards.</summary>
    public string WorkDirectory { get; }

    /// <summary>The local package source holding the packed CspNet.</summary>
    public string Feed { get; }

    /// <summary>A private global-packages folder, so that no stale CspNet from an earlier run is used.</summary>
    public string PackagesFolder { get; }

    /// <summary>The version given to the package.</summary>
    public string Version { get; }

    /// <summary>The outcome of <c>dotnet pack</c>; the tests assert on it.</summary>
    public DotNetCli.Result Pack { get; private set; } = new(-1, "not packed", TimeSpan.Zero);

    public async Task InitializeAsync()
    {
        Directory.CreateDirectory(WorkDirectory);
        Pack = await DotNetCli.RunAsync(
            WorkDirectory,
            PackagesFolder,
            PackTimeout,
            "pack", Path.Combine(RepoRoot, "src", "CspNet", "CspNet.csproj"),
            "-c", "Release",
            "-o", Feed,
            "--artifacts-path", Path.Combine(WorkDirectory, "artifacts"),
            $"-p:Version={Version}",
            "--disable-build-servers", "-nodeReuse:false");
    }

    public Task DisposeAsync()
    {
        try
        {
            Directory.Delete(WorkDirectory, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: it is a temporary folder.
        }
        catch (UnauthorizedAccessException)
        {
        }

        return Task.CompletedTask;
    }

    private static string FindRepoRoot()
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

/// <summary>Runs the dotnet CLI as a child process, capturing its output, with a time limit.</summary>
public static class DotNetCli
{
    /// <summary>What a dotnet command did.</summary>
    /// <param name="ExitCode">Its exit code; -1 if it was killed for taking too long.</param>
    /// <param name="Output">Standard output and error, interleaved.</param>
    /// <param name="Elapsed">How long it took.</param>
    public sealed record Result(int ExitCode, string Output, TimeSpan Elapsed);

    public static async Task<Result> RunAsync(string workingDirectory, string packagesFolder, TimeSpan timeout, params string[] arguments)
    {
        var start = new ProcessStartInfo(DotNetExecutable())
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        // The test host runs under `dotnet test`, whose MSBuild settings would leak into the
        // child build; start it with a clean MSBuild environment instead.
        foreach (string name in start.Environment.Keys.Where(k => k.StartsWith("MSBUILD", StringComparison.OrdinalIgnoreCase)).ToList())
        {
            start.Environment.Remove(name);
        }

        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        start.Environment["DOTNET_CLI_UI_LANGUAGE"] = "en";
        start.Environment["MSBUILDDISABLENODEREUSE"] = "1";
        start.Environment["NUGET_PACKAGES"] = packagesFolder;

        var output = new StringBuilder();
        void Append(object sender, DataReceivedEventArgs e)
        {
            if (e.Data is not null)
            {
                lock (output)
                {
                    output.AppendLine(e.Data);
                }
            }
        }

        Stopwatch stopwatch = Stopwatch.StartNew();
        using var process = new Process { StartInfo = start };
        process.OutputDataReceived += Append;
        process.ErrorDataReceived += Append;
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        using var timeoutSource = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(timeoutSource.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            lock (output)
            {
                output.AppendLine(CultureInfo.InvariantCulture, $"[killed after {timeout.TotalSeconds} s]");
                return new Result(-1, output.ToString(), stopwatch.Elapsed);
            }
        }

        lock (output)
        {
            return new Result(process.ExitCode, output.ToString(), stopwatch.Elapsed);
        }
    }

    /// <summary>The dotnet executable running these tests (DOTNET_HOST_PATH is set by the SDK), else the one on PATH.</summary>
    private static string DotNetExecutable()
    {
        string? host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
        return !string.IsNullOrEmpty(host) && File.Exists(host) ? host : "dotnet";
    }
}
