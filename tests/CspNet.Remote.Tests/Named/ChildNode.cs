using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading.Channels;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// A separate program (tests/CspNet.Remote.TestNode) running one scenario against a NameServer.
/// Its output lines are collected as they come; disposing it kills it if it is still running,
/// and every child still alive when the test run ends is killed too, so none outlives the suite.
/// </summary>
internal sealed class ChildNode : IAsyncDisposable
{
    private static readonly ConcurrentDictionary<int, Process> Alive = new();
    private static readonly TimeSpan LineTimeout = TimeSpan.FromSeconds(30);
    private readonly Process _process;
    private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
    private readonly List<string> _seen = [];

    static ChildNode() => AppDomain.CurrentDomain.ProcessExit += (_, _) => KillAll();

    private ChildNode(Process process) => _process = process;

    internal static ChildNode Start(Uri nameServer, params string[] scenario) =>
        StartProgram(Path.Combine("tests", "CspNet.Remote.TestNode"), "CspNet.Remote.TestNode", [nameServer.ToString(), .. scenario]);

    /// <summary>Starts the built program <paramref name="name"/> of the project in <paramref name="folder"/> with <paramref name="arguments"/>.</summary>
    internal static ChildNode StartProgram(string folder, string name, params string[] arguments)
    {
        string program = BuildOutput.ProgramPath(folder, name);
        Assert.True(File.Exists(program), $"{program} does not exist: build CspNet.sln (e.g. `dotnet test CspNet.sln`) first.");
        return Start(StartInfo(BuildOutput.DotNetExecutable(), [program, .. arguments]));
    }

    /// <summary>
    /// Starts <paramref name="fileName"/> (a path, or a program on PATH) in <paramref name="workingDirectory"/>
    /// with <paramref name="arguments"/>: a program that is not a .NET build output, such as node.
    /// </summary>
    /// <exception cref="System.ComponentModel.Win32Exception">The program could not be started (not installed).</exception>
    internal static ChildNode StartExecutable(string fileName, string workingDirectory, params string[] arguments)
    {
        ProcessStartInfo start = StartInfo(fileName, arguments);
        start.WorkingDirectory = workingDirectory;
        return Launch(start);
    }

    /// <summary>
    /// Starts <paramref name="start"/> as it is given (file, arguments, working folder, environment),
    /// with its output collected and the common .NET environment added: a program run through a wrapper.
    /// </summary>
    internal static ChildNode Start(ProcessStartInfo start)
    {
        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        start.RedirectStandardInput = true;
        start.UseShellExecute = false;
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        start.Environment["Logging__Console__FormatterName"] = "simple";
        return Launch(start);
    }

    private static ProcessStartInfo StartInfo(string fileName, IEnumerable<string> arguments)
    {
        var start = new ProcessStartInfo(fileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        return start;
    }

    private static ChildNode Launch(ProcessStartInfo start)
    {
        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        var child = new ChildNode(process);
        // The lines end when both outputs have: stderr may still be talking after stdout closed.
        int open = 2;
        void Received(string? line, string prefix)
        {
            if (line is not null)
            {
                child._lines.Writer.TryWrite(prefix + line);
            }
            else if (Interlocked.Decrement(ref open) == 0)
            {
                child._lines.Writer.TryComplete();
            }
        }

        process.OutputDataReceived += (_, e) => Received(e.Data, string.Empty);
        process.ErrorDataReceived += (_, e) => Received(e.Data, "stderr: ");
        try
        {
            process.Start();
        }
        catch
        {
            process.Dispose();
            throw;
        }

        Alive[process.Id] = process;
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return child;
    }

    internal int Id => _process.Id;

    /// <summary>Waits for the next line that starts with <paramref name="prefix"/>; fails on "failed" lines, exit or timeout.</summary>
    internal Task<string> WaitForAsync(string prefix) => WaitForLineAsync(line => line.StartsWith(prefix, StringComparison.Ordinal), prefix);

    /// <summary>Waits for the next line that contains <paramref name="text"/> anywhere (log lines have prefixes).</summary>
    internal Task<string> WaitForTextAsync(string text) => WaitForLineAsync(line => line.Contains(text, StringComparison.Ordinal), text);

    /// <summary>Like <see cref="WaitForTextAsync"/>, but a line already read while waiting for another counts too (log lines may come in either order).</summary>
    internal Task<string> SeenOrWaitForTextAsync(string text) =>
        _seen.Find(line => line.Contains(text, StringComparison.Ordinal)) is { } seen ? Task.FromResult(seen) : WaitForTextAsync(text);

    private async Task<string> WaitForLineAsync(Func<string, bool> matches, string prefix)
    {
        using var timeout = new CancellationTokenSource(LineTimeout);
        try
        {
            while (await _lines.Reader.WaitToReadAsync(timeout.Token))
            {
                while (_lines.Reader.TryRead(out string? line))
                {
                    _seen.Add(line);
                    if (matches(line))
                    {
                        return line;
                    }

                    Assert.False(line.StartsWith("failed", StringComparison.Ordinal), Describe($"the child failed instead of printing '{prefix}'"));
                }
            }
        }
        catch (OperationCanceledException)
        {
            Assert.Fail(Describe($"no '{prefix}' line within {LineTimeout.TotalSeconds} s"));
        }

        Assert.Fail(Describe($"the child ended without printing '{prefix}'"));
        return string.Empty;
    }

    internal Task ReadyAsync() => WaitForAsync("ready");

    /// <summary>Waits for the child to exit by itself and returns its exit code.</summary>
    internal async Task<int> ExitAsync()
    {
        using var timeout = new CancellationTokenSource(LineTimeout);
        await _process.WaitForExitAsync(timeout.Token);
        return _process.ExitCode;
    }

    /// <summary>
    /// Waits (at most <paramref name="timeout"/>) for the child to exit by itself and for the end of
    /// its output; returns its exit code and the lines not yet waited for (stderr's with "stderr: " in front).
    /// </summary>
    internal async Task<(int ExitCode, List<string> Lines)> ExitWithOutputAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        bool exited = true;
        try
        {
            // With asynchronous reading, this also waits for the end of both outputs.
            await _process.WaitForExitAsync(cancel.Token);
        }
        catch (OperationCanceledException)
        {
            exited = false;
        }

        var lines = new List<string>();
        while (_lines.Reader.TryRead(out string? line))
        {
            _seen.Add(line);
            lines.Add(line);
        }

        Assert.True(exited, Describe($"the child did not exit within {timeout.TotalSeconds} s"));
        return (_process.ExitCode, lines);
    }

    internal void CloseInput() => _process.StandardInput.Close();

    /// <summary>Writes <paramref name="line"/> to the program's input.</summary>
    internal async Task WriteLineAsync(string line)
    {
        await _process.StandardInput.WriteLineAsync(line);
        await _process.StandardInput.FlushAsync();
    }

    /// <summary>Kills the child (and waits until it is gone), as a crash or kill -9 would.</summary>
    internal async Task KillAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }

        await _process.WaitForExitAsync();
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await KillAsync();
        }
        finally
        {
            Alive.TryRemove(_process.Id, out _);
            _process.Dispose();
        }
    }

    private string Describe(string what) => $"{what}. Output so far:\n{string.Join('\n', _seen)}";

    private static void KillAll()
    {
        foreach (Process process in Alive.Values)
        {
            try
            {
                process.Kill(entireProcessTree: true);
            }
            catch (InvalidOperationException)
            {
            }
        }
    }
}
