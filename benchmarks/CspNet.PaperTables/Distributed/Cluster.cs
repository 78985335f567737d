using System.Diagnostics;
using CspNet.NameServer;
using CspNet.Remote;

namespace CspNet.PaperTables.Distributed;

/// <summary>
/// The programs of one distributed table: a NameServer and this program's node, in this process,
/// and child programs (this executable with <c>--node ROLE ...</c>), each a separate OS process
/// as users run them. A child ends when its standard input closes, so none outlives the table.
/// </summary>
internal sealed class Cluster : IAsyncDisposable
{
    internal const string NodeSwitch = "--node";
    internal const string NameServerVariable = "CSPNET_PAPERS_NAMESERVER";
    internal const string ReadyLine = "READY";

    private readonly NameServerHost _nameServer;
    private readonly List<Process> _children = [];

    private Cluster(NameServerHost nameServer, CspNode node)
    {
        _nameServer = nameServer;
        Node = node;
    }

    /// <summary>This program's node.</summary>
    internal CspNode Node { get; }

    internal static async Task<Cluster> StartAsync(string label)
    {
        NameServerHost nameServer = await NameServerHost.StartAsync();
        CspNode node = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = label });
        return new Cluster(nameServer, node);
    }

    /// <summary>Starts child programs with these role arguments, all at once, and waits until each says it is ready; returns the rest of each ready line.</summary>
    internal async Task<string[]> StartAsync(params string[][] roles)
    {
        var ready = new List<Task<string>>();
        foreach (string[] role in roles)
        {
            string path = Environment.ProcessPath ?? throw new InvalidOperationException("This program's executable path is unknown.");
            var start = new ProcessStartInfo(path)
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
            };
            if (Path.GetFileNameWithoutExtension(path) == "dotnet")
            {
                start.ArgumentList.Add(typeof(Cluster).Assembly.Location);
            }

            start.ArgumentList.Add(NodeSwitch);
            foreach (string argument in role)
            {
                start.ArgumentList.Add(argument);
            }

            start.Environment[NameServerVariable] = _nameServer.Uri.ToString();
            Process child = Process.Start(start) ?? throw new InvalidOperationException($"The {role[0]} program did not start.");
            _children.Add(child);
            ready.Add(ReadyAsync(child, role[0]));
        }

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        return await Task.WhenAll(ready).WaitAsync(timeout.Token);
    }

    private static async Task<string> ReadyAsync(Process child, string role)
    {
        while (await child.StandardOutput.ReadLineAsync() is string line)
        {
            if (line.StartsWith(ReadyLine, StringComparison.Ordinal))
            {
                // Keep draining its output so that a chatty child never blocks on a full pipe.
                _ = child.StandardOutput.ReadToEndAsync();
                return line[ReadyLine.Length..].Trim();
            }
        }

        throw new InvalidOperationException($"The {role} program ended before it was ready (exit code {(child.HasExited ? child.ExitCode : -1)}).");
    }

    public async ValueTask DisposeAsync()
    {
        foreach (Process child in _children)
        {
            try
            {
                child.StandardInput.Close();
            }
            catch (IOException)
            {
                // It has exited already.
            }
        }

        foreach (Process child in _children)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(15));
            try
            {
                await child.WaitForExitAsync(timeout.Token);
            }
            catch (OperationCanceledException)
            {
                child.Kill(entireProcessTree: true);
            }

            child.Dispose();
        }

        await Node.DisposeAsync();
        await _nameServer.DisposeAsync();
    }
}
