namespace CspNet.Remote.Tests;

/// <summary>
/// Where the programs the tests start as children were built: the solution build puts them in the
/// same configuration and target framework as this test assembly.
/// </summary>
internal static class BuildOutput
{
    private static readonly DirectoryInfo Output = new(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));

    /// <summary>The folder holding CspNet.sln.</summary>
    internal static string RepoRoot { get; } = FindRepoRoot();

    /// <summary>The built <c>Name.dll</c> of the project in <paramref name="folder"/> (relative to the repository root).</summary>
    internal static string ProgramPath(string folder, string name) =>
        Path.Combine(RepoRoot, folder, "bin", Output.Parent!.Name, Output.Name, name + ".dll");

    /// <summary>The dotnet executable running these tests (DOTNET_HOST_PATH is set by the SDK), else the one on PATH.</summary>
    internal static string DotNetExecutable()
    {
        string? host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
        return !string.IsNullOrEmpty(host) && File.Exists(host) ? host : "dotnet";
    }

    private static string FindRepoRoot()
    {
        for (DirectoryInfo? dir = Output; dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "CspNet.sln")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException($"CspNet.sln not found above {AppContext.BaseDirectory}.");
    }
}
