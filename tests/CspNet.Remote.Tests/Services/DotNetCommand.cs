using System.Diagnostics;

namespace CspNet.Remote.Tests.Services;

/// <summary>Runs a <c>dotnet</c> command (publish, pack, tool install) with a time limit, killing it when the limit passes.</summary>
internal static class DotNetCommand
{
    /// <summary>Runs <c>dotnet <paramref name="arguments"/></c>; throws with its output if it fails or takes longer than <paramref name="limit"/>.</summary>
    /// <param name="environment">Variables added to the command's environment; may be <see langword="null"/>.</param>
    internal static async Task RunAsync(IEnumerable<string> arguments, TimeSpan limit, IReadOnlyDictionary<string, string>? environment = null)
    {
        var start = new ProcessStartInfo(BuildOutput.DotNetExecutable())
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        string command = "dotnet " + string.Join(' ', start.ArgumentList);
        using var process = Process.Start(start)!;
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(limit);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{command} took more than {limit.TotalSeconds} s.");
        }

        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{command} failed ({process.ExitCode}): build the solution in this configuration first.\n{await stdout}\n{await stderr}");
        }
    }

    /// <summary>The configuration the test assembly (and so the programs it builds first) was built in.</summary>
    internal static string Configuration => new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar)).Parent!.Name;
}
