// CspNet's metrics exported with OpenTelemetry while CommsTime runs (docs/TELEMETRY.md).
//
// The CommsTime ring of samples/CommsTime (Prefix -> Delta -> Successor -> Prefix, Delta ->
// Consumer; its processes are compiled in from there) runs once with thread processes and once
// with async processes while an OpenTelemetry MeterProvider collects the "CspNet" meter. The
// console exporter prints every instrument when the provider is flushed at the end: no network,
// no collector needed. In a real program, swap AddConsoleExporter for an OTLP or Prometheus
// exporter, or watch the same meter live with `dotnet-counters monitor --counters CspNet -n <program>`.
//
//   dotnet run --project samples/Telemetry -- [--iterations N]
using System.CommandLine;
using CspNet.Diagnostics;
using OpenTelemetry;
using OpenTelemetry.Metrics;

Option<int> iterationsOption = Cli.IntCount("--iterations", "CommsTime iterations per process kind (suffixes k, M)", 10_000, 1, 100_000_000);
var root = new RootCommand("CspNet's metrics exported with OpenTelemetry (console exporter) while CommsTime runs.") { iterationsOption };
root.SetAction(parse => Run(parse.GetValue(iterationsOption)));
return Cli.Run(root, args);

static int Run(int iterations)
{
    // Nothing is measured until a listener enables an instrument: this provider is that listener.
    using (MeterProvider metrics = Sdk.CreateMeterProviderBuilder()
        .AddMeter(CspNetTelemetry.MeterName)
        .AddConsoleExporter()
        .Build())
    {
        foreach (bool asyncProcesses in new[] { false, true })
        {
            Consumer consumer = RunCommsTime(asyncProcesses, iterations);
            Console.WriteLine($"CommsTime, {(asyncProcesses ? "async" : "thread")} processes: {iterations:N0} iterations, "
                + $"{consumer.RoundTimes[0].TotalMicroseconds / iterations:F3} us/iteration{(consumer.InOrder ? "" : ", NUMBERS OUT OF ORDER")}");
        }

        Console.WriteLine();
        Console.WriteLine("OpenTelemetry console exporter:");
        metrics.ForceFlush();
    }

    return 0;
}

static Consumer RunCommsTime(bool asyncProcesses, int iterations)
{
    One2OneChannel<int> a = new(), b = new(), c = new(), d = new();
    var prefix = new Prefix(0, c, a);
    var delta = new Delta(a, d, b, parallel: false);
    var successor = new Successor(b, c);
    var consumer = new Consumer(d, warmUp: 0, minWarmUpTime: TimeSpan.Zero, iterations, rounds: 1);
    Parallel par;
    if (asyncProcesses)
    {
        par = new Parallel();
        foreach (Func<CancellationToken, Task> run in new Func<CancellationToken, Task>[] { prefix.RunAsync, delta.RunAsync, successor.RunAsync, consumer.RunAsync })
        {
            par.AddProcess(run);
        }
    }
    else
    {
        par = new Parallel(prefix, delta, successor, consumer);
    }

    par.Run();
    return consumer;
}
