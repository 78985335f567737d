using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;

/// <summary>
/// The writer programs the main program starts: this same executable, run again with writer
/// arguments. Their output is relayed with their name in front. Whatever ends the main program
/// (return, exception, Ctrl+C, SIGTERM), they are killed and waited for; and each writer also
/// exits by itself when the main program's process is gone, so none is left behind.
/// </summary>
sealed class WriterPrograms : IDisposable
{
    private readonly List<(string Name, Process Process)> writers = [];
    private readonly Lock gate = new();
    private readonly PosixSignalRegistration onSigterm;
    private bool closed;

    public WriterPrograms()
    {
        Console.CancelKeyPress += OnCancelKeyPress;
        AppDomain.CurrentDomain.ProcessExit += OnProcessExit;
        // SIGTERM too: the NameServer host and the CspManager node (ASP.NET Core hosts) handle it
        // themselves and cancel the default exit, so ProcessExit would not come.
        onSigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, _ => KillAll());
    }

    /// <summary>Whether a writer has exited with an error code.</summary>
    public bool AnyFailed => Snapshot().Any(w => w.Process.HasExited && w.Process.ExitCode != 0);

    /// <summary>Starts <c>writer name number nameServer thisProcessId</c>.</summary>
    public void Start(string name, int number, Uri nameServer)
    {
        // `dotnet run` starts the app host (PlusMinus); `dotnet PlusMinus.dll` starts dotnet itself.
        string self = Environment.ProcessPath ?? throw new InvalidOperationException("The path of this program is unknown.");
        var start = new ProcessStartInfo(self) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        if (Path.GetFileNameWithoutExtension(self) == "dotnet")
            start.ArgumentList.Add(typeof(WriterPrograms).Assembly.Location);
        foreach (string argument in new[] { "writer", name, number.ToString(CultureInfo.InvariantCulture), nameServer.ToString(), Environment.ProcessId.ToString(CultureInfo.InvariantCulture) })
            start.ArgumentList.Add(argument);

        var process = new Process { StartInfo = start };
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) Console.WriteLine($"[{name}] {e.Data}"); };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) Console.Error.WriteLine($"[{name}] {e.Data}"); };
        lock (gate)
        {
            ObjectDisposedException.ThrowIf(closed, this);
            process.Start();
            writers.Add((name, process));
        }

        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    /// <summary>Waits for every writer to exit; true if all did within <paramref name="timeout"/>, with exit code 0.</summary>
    public async Task<bool> WaitAsync(TimeSpan timeout)
    {
        using var deadline = new CancellationTokenSource(timeout);
        bool ok = true;
        foreach ((string name, Process process) in Snapshot())
        {
            try
            {
                await process.WaitForExitAsync(deadline.Token);
            }
            catch (OperationCanceledException)
            {
                Console.Error.WriteLine($"error: writer {name} did not exit within {timeout.TotalSeconds} s");
                ok = false;
                continue;
            }

            if (process.ExitCode != 0)
            {
                Console.Error.WriteLine($"error: writer {name} exited with code {process.ExitCode}");
                ok = false;
            }
        }

        return ok;
    }

    public void Dispose()
    {
        Console.CancelKeyPress -= OnCancelKeyPress;
        AppDomain.CurrentDomain.ProcessExit -= OnProcessExit;
        onSigterm.Dispose();
        KillAll();
        foreach ((_, Process process) in writers)
            process.Dispose();
    }

    private void OnCancelKeyPress(object? sender, ConsoleCancelEventArgs e) => KillAll();

    private void OnProcessExit(object? sender, EventArgs e) => KillAll();

    private (string Name, Process Process)[] Snapshot()
    {
        lock (gate)
            return [.. writers];
    }

    private void KillAll()
    {
        lock (gate)
        {
            closed = true;
            foreach ((_, Process process) in writers)
            {
                try
                {
                    process.Kill(entireProcessTree: true); // does nothing if it has exited
                    process.WaitForExit();
                }
                catch (Exception e) when (e is InvalidOperationException or Win32Exception)
                {
                    // Already disposed, or beyond reach: nothing more to do.
                }
            }
        }
    }
}
