using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;

/// <summary>
/// The programs a sample starts on this machine: this same executable, run again with other
/// arguments (a writer, a worker pool). Their output is relayed with their label in front, and a
/// sample can wait for a line a child prints when it is ready. Whatever ends the main program
/// (return, exception, Ctrl+C, SIGTERM), they are killed and waited for; and each child also
/// exits by itself when the main program's process is gone (<see cref="ExitWithParent"/>), so
/// none is left behind.
/// </summary>
/// <remarks>Shared by the samples (linked into each project), not part of the library.</remarks>
sealed class ChildPrograms : IDisposable
{
    private readonly List<(string Label, Process Process)> children = [];
    private readonly List<(string Label, string Line, TaskCompletionSource Seen)> awaited = [];
    private readonly Lock gate = new();
    private readonly PosixSignalRegistration onSigterm;
    private bool closed;

    public ChildPrograms()
    {
        Console.CancelKeyPress += OnCancelKeyPress;
        AppDomain.CurrentDomain.ProcessExit += OnProcessExit;
        // SIGTERM too: the NameServer host and the CspManager node (ASP.NET Core hosts) handle it
        // themselves and cancel the default exit, so ProcessExit would not come.
        onSigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, _ => KillAll());
    }

    /// <summary>Whether a child has exited with an error code.</summary>
    public bool AnyFailed => Snapshot().Any(c => c.Process.HasExited && c.Process.ExitCode != 0);

    /// <summary>
    /// Starts this program again with <paramref name="arguments"/> and this process's id last (a
    /// child passes it to <see cref="ExitWithParent"/>); its output lines appear as "[label] line".
    /// </summary>
    public void Start(string label, params string[] arguments)
    {
        // `dotnet run` starts the app host (the sample's own executable); `dotnet Sample.dll` starts dotnet itself.
        string self = Environment.ProcessPath ?? throw new InvalidOperationException("The path of this program is unknown.");
        var start = new ProcessStartInfo(self) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        if (Path.GetFileNameWithoutExtension(self) == "dotnet")
            start.ArgumentList.Add(typeof(ChildPrograms).Assembly.Location);
        foreach (string argument in arguments)
            start.ArgumentList.Add(argument);
        start.ArgumentList.Add(Environment.ProcessId.ToString(CultureInfo.InvariantCulture));

        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        // A child that ends before printing what the sample waits for fails that wait at once.
        process.Exited += (_, _) => Ended(label, process);
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
                return;
            Console.WriteLine($"[{label}] {e.Data}");
            Seen(label, e.Data);
        };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) Console.Error.WriteLine($"[{label}] {e.Data}"); };
        lock (gate)
        {
            ObjectDisposedException.ThrowIf(closed, this);
            process.Start();
            children.Add((label, process));
        }

        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    /// <summary>
    /// Completes when the child <paramref name="label"/> prints <paramref name="line"/> (call it
    /// before <see cref="Start"/>, so the line cannot pass unseen); fails if the child exits first,
    /// or after <paramref name="timeout"/>.
    /// </summary>
    public Task WhenPrintedAsync(string label, string line, TimeSpan timeout)
    {
        var seen = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (gate)
            awaited.Add((label, line, seen));
        return seen.Task.WaitAsync(timeout);
    }

    /// <summary>Waits for every child to exit; true if all did within <paramref name="timeout"/>, with exit code 0.</summary>
    public async Task<bool> WaitAsync(TimeSpan timeout)
    {
        using var deadline = new CancellationTokenSource(timeout);
        bool ok = true;
        foreach ((string label, Process process) in Snapshot())
        {
            try
            {
                await process.WaitForExitAsync(deadline.Token);
            }
            catch (OperationCanceledException)
            {
                Console.Error.WriteLine($"error: {label} did not exit within {timeout.TotalSeconds} s");
                ok = false;
                continue;
            }

            if (process.ExitCode != 0)
            {
                Console.Error.WriteLine($"error: {label} exited with code {process.ExitCode}");
                ok = false;
            }
        }

        return ok;
    }

    /// <summary>In a child: ends this program as soon as the process <paramref name="parentId"/> ends, however it ends.</summary>
    public static void ExitWithParent(int parentId)
    {
        Process parent;
        try
        {
            parent = Process.GetProcessById(parentId);
        }
        catch (ArgumentException)
        {
            Environment.Exit(3); // already gone
            return;
        }

        parent.EnableRaisingEvents = true;
        parent.Exited += (_, _) => Environment.Exit(3);
        if (parent.HasExited)
            Environment.Exit(3);
    }

    public void Dispose()
    {
        Console.CancelKeyPress -= OnCancelKeyPress;
        AppDomain.CurrentDomain.ProcessExit -= OnProcessExit;
        onSigterm.Dispose();
        KillAll();
        foreach ((_, Process process) in children)
            process.Dispose();
    }

    private void Seen(string label, string line)
    {
        lock (gate)
        {
            foreach ((string l, string text, TaskCompletionSource seen) in awaited)
            {
                if (l == label && line == text)
                    seen.TrySetResult();
            }
        }
    }

    private void Ended(string label, Process process)
    {
        string code;
        try
        {
            // The exit code is known once the output has been read to its end.
            process.WaitForExit();
            code = process.ExitCode.ToString(CultureInfo.InvariantCulture);
        }
        catch (InvalidOperationException)
        {
            code = "unknown"; // disposed by now: the sample is ending anyway
        }

        lock (gate)
        {
            foreach ((string l, string text, TaskCompletionSource seen) in awaited)
            {
                if (l == label)
                    seen.TrySetException(new InvalidOperationException($"{label} exited (code {code}) before printing \"{text}\"."));
            }
        }
    }

    private void OnCancelKeyPress(object? sender, ConsoleCancelEventArgs e) => KillAll();

    private void OnProcessExit(object? sender, EventArgs e) => KillAll();

    private (string Label, Process Process)[] Snapshot()
    {
        lock (gate)
            return [.. children];
    }

    private void KillAll()
    {
        (string Label, Process Process)[] all;
        lock (gate)
        {
            closed = true;
            all = [.. children];
        }

        // Outside the gate: WaitForExit raises a child's Exited event, whose handler (Ended) takes
        // the gate; waiting under it deadlocked when the event was raised on another thread at the
        // same moment (the sample then never exited).
        foreach ((_, Process process) in all)
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
