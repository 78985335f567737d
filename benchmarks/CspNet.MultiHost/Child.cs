using System.Diagnostics;
using System.Threading.Channels;

namespace CspNet.MultiHost;

/// <summary>A program the harness runs on a rig host: its output lines as they come, a line to its input, killed when disposed.</summary>
internal sealed class Child : IAsyncDisposable
{
    private readonly Process _process;
    private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();

    private Child(Process process) => _process = process;

    internal int Id => _process.Id;

    internal static Child Start(ProcessStartInfo start, string label)
    {
        start.RedirectStandardInput = true;
        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        start.UseShellExecute = false;
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        var process = new Process { StartInfo = start };
        var child = new Child(process);
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is { } line)
            {
                child._lines.Writer.TryWrite(line);
            }
            else
            {
                // The program has gone: whoever waits for a line of it hears so at once.
                child._lines.Writer.TryComplete();
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is { } line && !line.Contains("\"level\":\"info\"", StringComparison.Ordinal))
            {
                Console.Error.WriteLine($"[{label}] {line}");
            }
        };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return child;
    }

    /// <summary>The next line containing <paramref name="text"/>; a line starting "failed", the program's exit or <paramref name="timeout"/> ends the run.</summary>
    internal async Task<string> WaitForAsync(string text, TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        try
        {
            while (true)
            {
                string line = await _lines.Reader.ReadAsync(cancel.Token);
                if (line.StartsWith("failed", StringComparison.Ordinal))
                {
                    throw new InvalidOperationException($"program {_process.Id}: {line}");
                }

                if (line.Contains(text, StringComparison.Ordinal))
                {
                    return line;
                }
            }
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"program {_process.Id} printed no '{text}' within {timeout.TotalSeconds} s");
        }
        catch (ChannelClosedException)
        {
            throw new InvalidOperationException($"program {_process.Id} exited without printing '{text}' (its error output is above)");
        }
    }

    internal async Task SendAsync(string line)
    {
        await _process.StandardInput.WriteLineAsync(line);
        await _process.StandardInput.FlushAsync();
    }

    /// <summary>The program's resident memory, from /proc.</summary>
    internal long ResidentBytes()
    {
        foreach (string line in File.ReadLines($"/proc/{_process.Id}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                return long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], System.Globalization.CultureInfo.InvariantCulture) * 1024;
            }
        }

        return 0;
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                await _process.WaitForExitAsync();
            }
        }
        catch (InvalidOperationException)
        {
            // Never started, or already reaped.
        }

        _process.Dispose();
    }
}
