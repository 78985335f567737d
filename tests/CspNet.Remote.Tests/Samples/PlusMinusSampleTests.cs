using System.Diagnostics;
using System.Text;
using Xunit.Abstractions;

namespace CspNet.Remote.Tests.Samples;

/// <summary>
/// Runs samples/PlusMinus from its build output (<c>dotnet PlusMinus.dll</c>): it hosts a NameServer,
/// starts two writer programs and reads them (paper listings 4-5). It must exit with 0 and print
/// the summary line; a run over 60 s is killed with its whole process tree and fails.
/// </summary>
public class PlusMinusSampleTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact(Timeout = 90_000)]
    public async Task PlusMinus_ThreeProgramsOneNameServer_ReadsEverySumAndExitsCleanly()
    {
        string program = BuildOutput.ProgramPath(Path.Combine("samples", "PlusMinus"), "PlusMinus");
        Assert.True(File.Exists(program), $"{program} does not exist: build CspNet.sln (e.g. `dotnet test CspNet.sln`) first.");

        var start = new ProcessStartInfo(BuildOutput.DotNetExecutable())
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(program);
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";

        using var process = new Process { StartInfo = start };
        var stdout = new StringBuilder();
        var stderr = new StringBuilder();
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) lock (stdout) stdout.AppendLine(e.Data); };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (stderr) stderr.AppendLine(e.Data); };
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        using var timeout = new CancellationTokenSource(Timeout);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
            Assert.Fail($"PlusMinus did not finish within {Timeout.TotalSeconds} s and was killed.\n{Report()}");
        }

        process.WaitForExit(); // the asynchronous readers have seen the end of both streams
        output.WriteLine(Report());
        Assert.True(process.ExitCode == 0, Report());
        string[] lines = stdout.ToString().Split('\n').Select(line => line.TrimEnd('\r')).ToArray();
        // 10 sums of 1..99 (4950) from plus, 10 sums of 1..49 (1225) from minus: 10 * (4950 - 1225).
        Assert.Contains("read 10 from plus, 10 from minus; total 37250", lines);
        Assert.Contains("[plus] wrote 10 sums to plus", lines);
        Assert.Contains("[minus] wrote 10 sums to minus", lines);

        string Report() => $"exit code {(process.HasExited ? process.ExitCode : -1)}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}";
    }
}
