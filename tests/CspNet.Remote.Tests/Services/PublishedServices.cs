using System.Diagnostics;

namespace CspNet.Remote.Tests.Services;

/// <summary>
/// The two service programs published (framework-dependent, <c>dotnet publish --no-build</c> of the
/// build the test project made first) into a temporary folder, once for the test class, and
/// deleted afterwards: the tests then run each program from its published output alone.
/// </summary>
public sealed class PublishedServices : IAsyncLifetime
{
    private readonly string _root = Path.Combine(Path.GetTempPath(), "cspnet-services-" + Guid.NewGuid().ToString("N")[..8]);

    /// <summary>The published NameServer folder.</summary>
    internal string NameServer => Path.Combine(_root, "nameserver");

    /// <summary>The published worker pool folder.</summary>
    internal string WorkerPool => Path.Combine(_root, "workerpool");

    /// <summary>A folder for the tests' own files (sockets, the systemd stand-in).</summary>
    internal string Scratch => Path.Combine(_root, "scratch");

    /// <summary>How long publishing both took.</summary>
    internal TimeSpan PublishTime { get; private set; }

    public async Task InitializeAsync()
    {
        Directory.CreateDirectory(Scratch);
        Stopwatch stopwatch = Stopwatch.StartNew();
        await Task.WhenAll(
            PublishAsync(Path.Combine("NameServer", "NameServer.csproj"), NameServer),
            PublishAsync(Path.Combine("WorkerPoolService", "WorkerPoolService.csproj"), WorkerPool));
        PublishTime = stopwatch.Elapsed;
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

    private static Task PublishAsync(string project, string output) =>
        DotNetCommand.RunAsync(
            ["publish", Path.Combine(BuildOutput.RepoRoot, project), "--no-build", "-c", DotNetCommand.Configuration, "-o", output, "-nologo", "-v", "q"],
            TimeSpan.FromMinutes(2));
}
