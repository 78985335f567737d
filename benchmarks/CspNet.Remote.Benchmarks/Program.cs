using System.CommandLine;
using System.Globalization;
using BenchmarkDotNet.Running;
using CspNet.Remote.Benchmarks.Charts;

namespace CspNet.Remote.Benchmarks;

internal static class Program
{
    private static int Main(string[] args)
    {
        // "charts" draws from a finished run's reports; anything else is BenchmarkDotNet's own command line.
        if (args is [ChartsCommand.Name, ..])
        {
            return Cli.Run(
                new RootCommand("Charts of the distributed layer's benchmarks.") { ChartsCommand.Create() },
                args,
                "Example, after a run of NamedWriteLatency and NamedThroughput (README.md):\n"
                + "  dotnet run -c Release --project benchmarks/CspNet.Remote.Benchmarks -- charts --out docs/images --note \"load 1-2\"");
        }

        // "probe" runs one latency case in this process, for CPU time and work items (Probe.cs).
        if (args is [Probe.Name, string method, string size, .. var rest])
        {
            return Probe.RunAsync(method, int.Parse(size, CultureInfo.InvariantCulture), rest is [string s] ? double.Parse(s, CultureInfo.InvariantCulture) : 4).GetAwaiter().GetResult();
        }

        // "crossproc" runs writer and reader as separate programs (CrossProcess.cs); "crossproc-serve" is its reader.
        if (args is [CrossProcess.Name, ..])
        {
            return CrossProcess.RunAsync(args).GetAwaiter().GetResult();
        }

        if (args is [CrossProcess.ServeName, string kind])
        {
            return CrossProcess.ServeAsync(kind).GetAwaiter().GetResult();
        }

        // "--gc default" runs the job with the runtime's GC settings instead of the large-value ones
        // (RemoteBenchmarkConfig.LargeValueGc); the option is ours, so BenchmarkDotNet never sees it.
        int gc = Array.IndexOf(args, "--gc");
        if (gc >= 0)
        {
            string? choice = gc + 1 < args.Length ? args[gc + 1] : null;
            RemoteBenchmarkConfig.LargeValueGcOn = choice switch
            {
                "large" => true,
                "default" => false,
                _ => throw new ArgumentException($"--gc takes 'large' (the default) or 'default', not '{choice}'.", nameof(args)),
            };
            args = [.. args[..gc], .. args[(gc + 2)..]];
        }

        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
        return 0;
    }
}
