using System.Diagnostics;
using Xunit.Abstractions;

namespace CspNet.SystematicTests;

/// <summary>
/// Runs the spin model check of the channel protocol (verification/check-model.sh). CI installs
/// spin (.ci/run); elsewhere the test is skipped, with a message, when spin is missing.
/// </summary>
public class ProtocolModelTests(ITestOutputHelper output)
{
    [SkippableFactWhenSpinMissing]
    public void ProtocolModel_EveryConfiguration_Verifies()
    {
        string script = Path.Combine(RepositoryRoot(), "verification", "check-model.sh");
        var start = new ProcessStartInfo("bash", [script])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using Process process = Process.Start(start)!;
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        string stdout = process.StandardOutput.ReadToEnd();
        bool exited = process.WaitForExit(TimeSpan.FromMinutes(8));
        if (!exited)
        {
            process.Kill(entireProcessTree: true);
        }

        output.WriteLine(stdout);
        output.WriteLine(stderr.Result);
        Assert.True(exited, "The model check did not finish within 8 minutes.");
        Assert.True(process.ExitCode == 0, $"The model check failed:{Environment.NewLine}{stdout}{stderr.Result}");
    }

    internal static string RepositoryRoot()
    {
        for (DirectoryInfo? directory = new(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "CspNet.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"No CspNet.sln above {AppContext.BaseDirectory}.");
    }

    /// <summary>A fact skipped when spin is not installed, unless in CI (CI=true), where the model check must run.</summary>
    [AttributeUsage(AttributeTargets.Method)]
    private sealed class SkippableFactWhenSpinMissingAttribute : FactAttribute
    {
        public SkippableFactWhenSpinMissingAttribute()
        {
            bool inCi = string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);
            if (!inCi && !SpinInstalled())
            {
                Skip = "spin is not installed (Debian: apt-get install -y spin); .ci/run installs it and runs this check.";
            }
        }

        private static bool SpinInstalled() =>
            (Environment.GetEnvironmentVariable("PATH") ?? "")
                .Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
                .Any(directory => File.Exists(Path.Combine(directory, "spin")));
    }
}
