using System.Globalization;
using Xunit.Abstractions;

namespace CspNet.Tests.Samples;

/// <summary>samples/Telemetry: CommsTime's ring runs while OpenTelemetry's console exporter collects the CspNet meter.</summary>
public class TelemetrySampleTests(ITestOutputHelper output)
{
    [Fact(Timeout = 60_000)]
    public async Task Telemetry_TinyCommsTime_ExportsEveryCoreInstrumentWithTheRingsCommunications()
    {
        const int Iterations = 500;
        using var folder = new TempFolder();

        SampleRunner.Result run = await SampleRunner.RunAsync("Telemetry", folder.Path, "--iterations", Iterations.ToString(CultureInfo.InvariantCulture));
        output.WriteLine(run.ToString());

        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Contains(run.Lines, line => line.StartsWith("CommsTime, thread processes: 500 iterations", StringComparison.Ordinal));
        Assert.Contains(run.Lines, line => line.StartsWith("CommsTime, async processes: 500 iterations", StringComparison.Ordinal));
        Assert.DoesNotContain(run.Lines, line => line.Contains("OUT OF ORDER", StringComparison.Ordinal));
        foreach (string instrument in new[] { "cspnet.channel.communications", "cspnet.process.live", "cspnet.process.parked", "cspnet.channel.poisoned" })
        {
            Assert.Contains(run.Lines, line => line.StartsWith($"Metric Name: {instrument},", StringComparison.Ordinal));
        }

        // Two rings of four communications per iteration, and the few still on their way when the Consumer poisons.
        Assert.InRange(ValueAfter(run, "Metric Name: cspnet.channel.communications,"), 2 * 4 * Iterations, 2 * 4 * Iterations + 16);

        // Every process ended, every parked process was woken: both up-down counters are back at 0.
        Assert.Equal(0, ValueAfter(run, "Metric Name: cspnet.process.live,"));
        Assert.Equal(0, ValueAfter(run, "Metric Name: cspnet.process.parked,"));
    }

    /// <summary>
    /// The first "Value: N" after the line that starts with <paramref name="heading"/> in the
    /// sample's final flush. The exporter also prints periodically (every few seconds), so on a
    /// slow machine an earlier, partial export may precede it; the counters are cumulative, so the
    /// flush at the end has the totals.
    /// </summary>
    private static long ValueAfter(SampleRunner.Result run, string heading)
    {
        string[] lines = run.Lines;
        int flush = Array.FindIndex(lines, line => line.StartsWith("OpenTelemetry console exporter:", StringComparison.Ordinal));
        Assert.True(flush >= 0, "The sample printed no final flush.");
        int at = Array.FindIndex(lines, flush, line => line.StartsWith(heading, StringComparison.Ordinal));
        Assert.True(at >= 0, $"'{heading}' not in the output.");
        string value = lines.Skip(at).First(line => line.StartsWith("Value: ", StringComparison.Ordinal));
        return long.Parse(value["Value: ".Length..], CultureInfo.InvariantCulture);
    }
}
