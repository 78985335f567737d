using System.ComponentModel;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Interop;

/// <summary>
/// samples/NodeClient, the Node.js client of the wire protocol, run as a child program. Node must be
/// installed: without it the tests fail, saying how to install it, rather than skip. Its packages are
/// installed once per test run with <c>npm ci</c> when node_modules lacks them.
/// </summary>
internal static class NodeClientProgram
{
    private static readonly TimeSpan InstallTimeout = TimeSpan.FromMinutes(5);
    private static readonly TimeSpan CheckTimeout = TimeSpan.FromSeconds(30);
    private static readonly SemaphoreSlim Gate = new(1, 1);
    private static bool _ready;

    /// <summary>samples/NodeClient.</summary>
    internal static string Folder { get; } = Path.Combine(BuildOutput.RepoRoot, "samples", "NodeClient");

    /// <summary>Starts <c>node client.js --nameserver URI</c> with <paramref name="command"/>; dispose the child to kill it.</summary>
    internal static async Task<ChildNode> StartAsync(Uri nameServer, params string[] command)
    {
        await EnsureReadyAsync();
        return ChildNode.StartExecutable("node", Folder, ["client.js", "--nameserver", nameServer.ToString(), .. command]);
    }

    private static async Task EnsureReadyAsync()
    {
        await Gate.WaitAsync();
        try
        {
            if (_ready)
            {
                return;
            }

            await RunAsync(
                "node",
                ["--version"],
                CheckTimeout,
                "Node.js is not installed (no `node` on PATH). Install Node.js 18 or later (Debian/Ubuntu: `apt-get install nodejs npm`; elsewhere: https://nodejs.org), then run the tests again.");
            if (!PackagesInstalled())
            {
                // The npm registry must be reachable; the lock file pins every package.
                await RunAsync(
                    OperatingSystem.IsWindows() ? "npm.cmd" : "npm",
                    ["ci", "--no-audit", "--no-fund"],
                    InstallTimeout,
                    $"Installing the Node client's packages failed: run `npm ci` in {Folder} (it needs the npm registry) and run the tests again.");
                Assert.True(PackagesInstalled(), $"`npm ci` in {Folder} did not install @grpc/grpc-js and @grpc/proto-loader.");
            }

            _ready = true;
        }
        finally
        {
            Gate.Release();
        }
    }

    private static bool PackagesInstalled() =>
        File.Exists(Path.Combine(Folder, "node_modules", "@grpc", "grpc-js", "package.json"))
        && File.Exists(Path.Combine(Folder, "node_modules", "@grpc", "proto-loader", "package.json"));

    private static async Task RunAsync(string program, string[] arguments, TimeSpan timeout, string whatToDo)
    {
        ChildNode child;
        try
        {
            child = ChildNode.StartExecutable(program, Folder, arguments);
        }
        catch (Win32Exception e)
        {
            Assert.Fail($"{whatToDo} ({program}: {e.Message})");
            throw;
        }

        await using (child)
        {
            (int exitCode, List<string> lines) = await child.ExitWithOutputAsync(timeout);
            Assert.True(exitCode == 0, $"{whatToDo}\n`{program} {string.Join(' ', arguments)}` exited with {exitCode}:\n{string.Join('\n', lines)}");
        }
    }
}
