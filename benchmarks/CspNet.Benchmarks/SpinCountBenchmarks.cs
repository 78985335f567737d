using System.Globalization;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Jobs;
using CspNet.Internal;
using Parallel = CspNet.Parallel;

namespace CspNet.Benchmarks;

/// <summary>
/// The thread-process ping-pong of <see cref="PingPongBenchmarks.CspThreads"/> once per spin
/// count of the parked thread's ManualResetEventSlim. SpinTuning reads CSPNET_SPIN_COUNT once per
/// process, so each value is its own job (its own child process), set through the job's
/// environment. The job with the default spin count is the baseline. Run with
/// <c>dotnet run -c Release -- --filter '*SpinCount*'</c>.
/// </summary>
/// <remarks>
/// Spinning only pays while the partner thread is running on another core, so results depend on
/// what else the machine runs: on a busy machine the spin is mostly wasted.
/// </remarks>
[Config(typeof(SpinCountConfig))]
public class SpinCountBenchmarks
{
    private readonly One2OneChannel<int> _ping = new();
    private readonly One2OneChannel<int> _pong = new();
    private Parallel _cspThreads = null!;

    [GlobalSetup]
    public void Setup()
    {
        // Shows in the log that the child process saw the job's variable.
        Console.WriteLine(
            $"// CSPNET_SPIN_COUNT={Environment.GetEnvironmentVariable("CSPNET_SPIN_COUNT") ?? "(unset)"}, " +
            $"SpinTuning.SyncWaiterSpinCount={SpinTuning.SyncWaiterSpinCount}, ProcessorCount={Environment.ProcessorCount}");

        _cspThreads = new Parallel();
        _cspThreads.AddProcess(() => PingPong.CspPing(_ping, _pong, PingPongBenchmarks.RoundTrips));
        _cspThreads.AddProcess(() => PingPong.CspPong(_ping, _pong, PingPongBenchmarks.RoundTrips));
    }

    /// <summary>CspNet, two thread processes using blocking Read/Write.</summary>
    [Benchmark(OperationsPerInvoke = PingPongBenchmarks.RoundTrips)]
    public Task CspThreads() => _cspThreads.RunAsync();
}

/// <summary>One job per spin count, same iteration settings as <see cref="PingPongBenchmarks"/>.</summary>
internal sealed class SpinCountConfig : ManualConfig
{
    public SpinCountConfig()
    {
        Job template = Job.Default.WithLaunchCount(3).WithWarmupCount(3).WithIterationCount(10);
        foreach (int spinCount in new[] { 0, 10, 35, 100, 1000 })
        {
            Job job = template
                .WithEnvironmentVariables(new EnvironmentVariable("CSPNET_SPIN_COUNT", spinCount.ToString(CultureInfo.InvariantCulture)))
                .WithId($"Spin{spinCount}");
            AddJob(spinCount == SpinTuning.DefaultSpinCount ? job.AsBaseline() : job);
        }

        AddDiagnoser(MemoryDiagnoser.Default);
    }
}
