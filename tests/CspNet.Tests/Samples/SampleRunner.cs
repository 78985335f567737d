using System.Diagnostics;
using System.Text;

namespace CspNet.Tests.Samples;

/// <summary>
/// Runs a sample's built program (<c>samples/Name/bin/Configuration/net10.0/Name.dll</c>) as a child
/// process with <c>dotnet</c>, capturing its output, with a time limit. The samples are not
/// referenced by the test project: the solution build (<c>dotnet test CspNet.sln</c>) builds them
/// in the same configuration as this test assembly, which is where they are looked for.
/// </summary>
internal static class SampleRunner
{
    private static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(30);

    /// <summary>What a sample run did.</summary>
    /// <param name="ExitCode">Its exit code; -1 if it was killed for taking too long.</param>
    /// <param name="Output">Its standard output.</param>
    /// <param name="Error">Its standard error.</param>
    /// <param name="Elapsed">How long it took, start-up included.</param>
    internal sealed record Result(int ExitCode, string Output, string Error, TimeSpan Elapsed)
    {
        /// <summary>The output's lines, with progress lines rewritten in place (\r) reduced to their last state.</summary>
        public string[] Lines => Output.Split('\n').Select(line => line.TrimEnd('\r')).Select(line => line[(line.LastIndexOf('\r') + 1)..]).ToArray();

        public override string ToString() =>
            $"exit code {ExitCode} after {Elapsed.TotalSeconds:F1} s\n--- stdout ---\n{Output}\n--- stderr ---\n{Error}";
    }

    /// <summary>The folder holding CspNet.sln.</summary>
    internal static string RepoRoot { get; } = FindRepoRoot();

    /// <summary>Runs sample <paramref name="name"/> with <paramref name="arguments"/> in <paramref name="workingDirectory"/>, for at most 30 s.</summary>
    internal static Task<Result> RunAsync(string name, string workingDirectory, params string[] arguments) =>
        RunAsync(name, workingDirectory, DefaultTimeout, arguments);

    /// <summary>
    /// Runs sample <paramref name="name"/> with <paramref name="arguments"/> in <paramref name="workingDirectory"/>;
    /// after <paramref name="timeout"/> it is killed with its whole process tree (its child programs too).
    /// </summary>
    internal static Task<Result> RunAsync(string name, string workingDirectory, TimeSpan timeout, params string[] arguments) =>
        RunProgramAsync(ProgramPath("samples", name), workingDirectory, timeout, arguments);

    /// <summary>
    /// Runs benchmark program <paramref name="name"/> (<c>benchmarks/Name</c>, built like the samples) with
    /// <paramref name="arguments"/>; after <paramref name="timeout"/> it is killed with its whole process tree.
    /// </summary>
    internal static Task<Result> RunBenchmarkAsync(string name, string workingDirectory, TimeSpan timeout, params string[] arguments) =>
        RunProgramAsync(ProgramPath("benchmarks", name), workingDirectory, timeout, arguments);

    private static async Task<Result> RunProgramAsync(string program, string workingDirectory, TimeSpan timeout, string[] arguments)
    {
        Assert.True(File.Exists(program), $"{program} does not exist. The smoke tests run the samples built by the solution: "
            + $"build CspNet.sln in the configuration of the tests ({Configuration}) first, e.g. `dotnet test CspNet.sln`.");

        var start = new ProcessStartInfo(DotNetExecutable())
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(program);
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";

        var output = new StringBuilder();
        var error = new StringBuilder();
        Stopwatch stopwatch = Stopwatch.StartNew();
        using var process = new Process { StartInfo = start };
        process.Start();
        Task<string> readOutput = process.StandardOutput.ReadToEndAsync();
        Task<string> readError = process.StandardError.ReadToEndAsync();

        using var timeoutSource = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(timeoutSource.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
            return new Result(-1, await readOutput, await readError + $"\n[killed after {timeout.TotalSeconds} s]", stopwatch.Elapsed);
        }

        return new Result(process.ExitCode, await readOutput, await readError, stopwatch.Elapsed);
    }

    /// <summary>The configuration (Debug, Release) this test assembly was built in: the samples were built in the same.</summary>
    private static string Configuration => new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar)).Parent!.Name;

    private static string TargetFramework => new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar)).Name;

    private static string ProgramPath(string folder, string name) =>
        Path.Combine(RepoRoot, folder, name, "bin", Configuration, TargetFramework, name + ".dll");

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

    /// <summary>The dotnet executable running these tests (DOTNET_HOST_PATH is set by the SDK), else the one on PATH.</summary>
    private static string DotNetExecutable()
    {
        string? host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
        return !string.IsNullOrEmpty(host) && File.Exists(host) ? host : "dotnet";
    }
}

/// <summary>A temporary folder for one test's files, deleted afterwards.</summary>
internal sealed class TempFolder : IDisposable
{
    public TempFolder() => Directory.CreateDirectory(Path);

    public string Path { get; } = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "cspnet-sample-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: it is a temporary folder.
        }
        catch (UnauthorizedAccessException)
        {
        }
    }
}
