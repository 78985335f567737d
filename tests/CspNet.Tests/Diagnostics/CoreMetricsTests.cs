using CspNet.Diagnostics;
using CspNet.Tests.Channels;
using CspNet.Tests.Processes;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;

namespace CspNet.Tests.Diagnostics;

/// <summary>
/// The meter is process-wide, so the tests that count its measurements exactly run alone: no other
/// test communicates meanwhile.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class MetricsGroup
{
    public const string Name = "Metrics";
}

/// <summary>Each instrument of the <c>CspNet</c> meter (docs/TELEMETRY.md) counts what it says.</summary>
[Collection(MetricsGroup.Name)]
public sealed class CoreMetricsTests
{
    private static MetricCollector<long> Collect(string instrument) => new(null, CspNetTelemetry.MeterName, instrument);

    [Fact(Timeout = 10_000)]
    public async Task Communications_RendezvousAndBufferedValues_CountEachValueTakenOnce()
    {
        using MetricCollector<long> communications = Collect("cspnet.channel.communications");
        var rendezvous = new One2OneChannel<int>();
        var buffered = new Any2AnyChannel<int>(new FifoBuffer<int>(4));

        var parallel = new Parallel(
            new AsyncActionProcess(async ct =>
            {
                for (int i = 0; i < 3; i++)
                {
                    await rendezvous.WriteAsync(i, ct);
                }
            }),
            new AsyncActionProcess(async ct =>
            {
                for (int i = 0; i < 3; i++)
                {
                    await rendezvous.ReadAsync(ct);
                }
            }));
        await parallel.RunAsync();
        for (int i = 0; i < 4; i++)
        {
            buffered.Write(i);
        }

        for (int i = 0; i < 4; i++)
        {
            buffered.Read();
        }

        IReadOnlyList<CollectedMeasurement<long>> measured = communications.GetMeasurementSnapshot();
        Assert.Equal(3, measured.Where(m => m.MatchesTags(new KeyValuePair<string, object?>("cspnet.channel.kind", "One2OneChannel"))).Sum(m => m.Value));
        Assert.Equal(4, measured.Where(m => m.MatchesTags(new KeyValuePair<string, object?>("cspnet.channel.kind", "Any2AnyChannel"))).Sum(m => m.Value));
        Assert.Equal("{communication}", communications.Instrument!.Unit);
    }

    [Fact(Timeout = 10_000)]
    public async Task Selections_InputGuardsReady_CountEachChoice()
    {
        using MetricCollector<long> selections = Collect("cspnet.alternative.selections");
        var channel = new One2OneChannel<int>(new FifoBuffer<int>(2));
        channel.Write(1);
        channel.Write(2);
        var alternative = new Alternative(channel.In);

        Assert.Equal(0, alternative.PriSelect());
        channel.Read();
        Assert.Equal(0, await alternative.PriSelectAsync());
        channel.Read();

        Assert.Equal(2, selections.GetMeasurementSnapshot().Sum(m => m.Value));
    }

    [Fact(Timeout = 10_000)]
    public async Task LiveProcesses_ParallelRun_CountsEachProcessInAndOutByKind()
    {
        using MetricCollector<long> live = Collect("cspnet.process.live");
        var parallel = new Parallel();
        parallel.AddProcess(new ActionProcess(() => { }));
        parallel.AddProcess(new AsyncActionProcess(_ => Task.CompletedTask));
        parallel.AddProcess(new AsyncActionProcess(async _ => await Task.Yield()));

        await parallel.RunAsync();

        IReadOnlyList<CollectedMeasurement<long>> measured = live.GetMeasurementSnapshot();
        Assert.Equal<long>([1, -1], ValuesOfKind(measured, "thread"));
        Assert.Equal<long>([-1, -1, 1, 1], ValuesOfKind(measured, "async").Order());
        Assert.Equal(0, measured.Sum(m => m.Value));
    }

    [Fact(Timeout = 10_000)]
    public async Task ParkedProcesses_ReadersAndSelectionsWaiting_CountedWhileParked()
    {
        using MetricCollector<long> parked = Collect("cspnet.process.parked");
        var channel = new One2OneChannel<int>();

        // An async read parks at once: counted before ReadAsync returns.
        ValueTask<int> read = channel.ReadAsync();
        Assert.Equal<long>([1], ValuesOfKind(parked.GetMeasurementSnapshot(), "async"));
        await channel.WriteAsync(7);
        Assert.Equal(7, await read);
        Assert.Equal<long>([1, -1], ValuesOfKind(parked.GetMeasurementSnapshot(), "async"));

        // A thread reader and a blocking selection: counted once each is parked, out once woken.
        parked.Clear();
        var selected = new One2OneChannel<int>();
        var reader = ThreadParty.Start(channel.Read);
        var selector = ThreadParty.Start(() => new Alternative(selected.In).PriSelect());
        await parked.WaitForMeasurementsAsync(2).WaitAsync(TimeSpan.FromSeconds(5));
        channel.Write(8);
        Assert.Equal(8, await reader.Completion);
        selected.Write(9);
        Assert.Equal(0, await selector.Completion);
        Assert.Equal(9, selected.Read());
        Assert.Equal<long>([-1, -1, 1, 1], ValuesOfKind(parked.GetMeasurementSnapshot(), "thread").Order());
    }

    [Fact]
    public void PoisonedChannels_PoisonTwice_CountsTheChannelOnce()
    {
        using MetricCollector<long> poisoned = Collect("cspnet.channel.poisoned");
        var channel = new Any2OneChannel<string>();

        channel.Poison();
        channel.Poison();

        CollectedMeasurement<long> measured = Assert.Single(poisoned.GetMeasurementSnapshot());
        Assert.Equal(1, measured.Value);
        Assert.Equal("Any2OneChannel", measured.Tags["cspnet.channel.kind"]);
    }

    private static List<long> ValuesOfKind(IReadOnlyList<CollectedMeasurement<long>> measured, string kind) =>
        measured.Where(m => Equals(m.Tags["cspnet.process.kind"], kind)).Select(m => m.Value).ToList();
}
