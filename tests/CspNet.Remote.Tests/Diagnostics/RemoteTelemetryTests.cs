using System.Collections.Concurrent;
using System.Diagnostics;
using CspNet.NameServer;
using CspNet.Remote.Diagnostics;
using CspNet.Remote.NameServer;
using CspNet.Remote.Tests.Named;
using CspNet.Remote.Tests.NameServer;
using CspNet.Remote.Tests.Workers;
using CspNet.Remote.Workers;
using Microsoft.Extensions.Diagnostics.Metrics.Testing;

namespace CspNet.Remote.Tests.Diagnostics;

/// <summary>
/// The meter and the activity source are process-wide, so the tests that count their
/// measurements exactly run alone.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class RemoteTelemetryGroup
{
    public const string Name = "Remote telemetry";
}

/// <summary>Each instrument of the <c>CspNet.Remote</c> meter and each activity (docs/TELEMETRY.md) reports what it says.</summary>
[Collection(RemoteTelemetryGroup.Name)]
public sealed class RemoteTelemetryTests
{
    private const int Timeout = 30_000;

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_ToAChannelHomedInTheReadingProgram_ReceiveActivityContinuesTheWritersTrace()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (AltingChannelIn<int> input, IChannelOut<int> output) = await ConnectAsync(system, "traced");
        var stopped = new ConcurrentQueue<Activity>();
        using ActivityListener listener = Listen(stopped);
        using var caller = new ActivitySource("CspNet.Tests.Caller");
        using var callerListener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == caller.Name,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
        };
        ActivitySource.AddActivityListener(callerListener);

        Task<int> read = input.ReadAsync().AsTask();
        Activity? outer;
        using (outer = caller.StartActivity("caller"))
        {
            await output.WriteAsync(42);
        }

        Assert.Equal(42, await read);
        Activity send = Assert.Single(stopped, a => a.OperationName == "cspnet.channel.send");
        Activity receive = Assert.Single(stopped, a => a.OperationName == "cspnet.channel.receive");
        Assert.Equal(outer!.TraceId, send.TraceId);
        Assert.Equal(outer.SpanId, send.ParentSpanId);
        Assert.Equal(ActivityKind.Producer, send.Kind);
        Assert.Equal("traced", send.GetTagItem("cspnet.channel.name"));
        Assert.Equal(send.TraceId, receive.TraceId);
        Assert.Equal(send.SpanId, receive.ParentSpanId);
        Assert.Equal(ActivityKind.Consumer, receive.Kind);
        Assert.True(receive.HasRemoteParent);
    }

    [Fact(Timeout = Timeout)]
    public async Task LinkAndWriteInstruments_ThreeRemoteWrites_CountFramesBytesAndEachRoundTrip()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (AltingChannelIn<int> input, IChannelOut<int> output) = await ConnectAsync(system, "counted");
        using MetricCollector<long> messages = Collect<long>("cspnet.remote.link.messages");
        using MetricCollector<long> bytes = Collect<long>("cspnet.remote.link.io");
        using MetricCollector<double> duration = Collect<double>("cspnet.remote.write.duration");

        Task reading = Task.Run(async () =>
        {
            for (int i = 0; i < 3; i++)
            {
                await input.ReadAsync();
            }
        });
        for (int i = 0; i < 3; i++)
        {
            await output.WriteAsync(i);
        }

        await reading;
        Assert.Equal(3, duration.GetMeasurementSnapshot().Count);
        Assert.All(duration.GetMeasurementSnapshot(), m => Assert.True(m.Value > 0));
        Assert.Equal("s", duration.Instrument!.Unit);

        // Each write is a Write frame one way and a Completed frame back, both counted at each end.
        Assert.True(Sum(messages, "transmit") >= 6);
        Assert.True(Sum(messages, "receive") >= 6);
        Assert.True(Sum(bytes, "transmit") >= Sum(messages, "transmit"));
        Assert.Equal("By", bytes.Instrument!.Unit);
    }

    [Fact(Timeout = Timeout)]
    public async Task NameServerInstruments_RegisterThenLetTheLeaseLapse_CountTheNameAndTheExpiry()
    {
        var time = new ManualTimeProvider();
        using var registry = new InMemoryNameRegistry(new NameServerOptions { LeaseTtl = TimeSpan.FromSeconds(10) }, time);
        using MetricCollector<long> registrations = Collect<long>("cspnet.nameserver.registrations");
        using MetricCollector<long> expiries = Collect<long>("cspnet.nameserver.lease.expiries");

        NameLease lease = await registry.OpenLeaseAsync(new LinkEndpoint("127.0.0.1", 7001), "telemetry");
        await registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel("numbers"), returnExisting: false);
        await registry.RegisterAsync(lease.Id, InMemoryNameRegistryTests.Channel("numbers"), returnExisting: true); // not a new name
        time.Advance(TimeSpan.FromSeconds(11));
        Assert.Null(await registry.ResolveAsync("numbers", TimeSpan.Zero));

        CollectedMeasurement<long> registered = Assert.Single(registrations.GetMeasurementSnapshot());
        Assert.Equal("One2One", registered.Tags["cspnet.name.kind"]);
        Assert.Equal(1, expiries.GetMeasurementSnapshot().Sum(m => m.Value));
    }

    [Fact(Timeout = Timeout)]
    public async Task PoolInstruments_OneJobThrowsOneRuns_CountQueuedRunningFailedAndTraceTheJobs()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await system.PoolAsync("pool", 2);
        CspNode client = await system.NodeAsync("client");
        using MetricCollector<long> queued = Collect<long>("cspnet.pool.jobs.queued");
        using MetricCollector<long> running = Collect<long>("cspnet.pool.jobs.running");
        using MetricCollector<long> failed = Collect<long>("cspnet.pool.jobs.failed");
        var stopped = new ConcurrentQueue<Activity>();
        using ActivityListener listener = Listen(stopped);
        var run = new DistParallel([new WhereAmI(), new Thrower()], client) { Shipper = new FakeShipping() };

        await Assert.ThrowsAsync<AggregateException>(() => run.RunAsync());

        Assert.Equal(2, run.RanRemotely);
        // The first jobs to reach the pool wait for their code (FakeShipping sends it on request).
        Assert.Contains(1, queued.GetMeasurementSnapshot().Select(m => m.Value));
        Assert.Equal(0, queued.GetMeasurementSnapshot().Sum(m => m.Value));
        Assert.Equal<long>([-1, -1, 1, 1], running.GetMeasurementSnapshot().Select(m => m.Value).Order());
        CollectedMeasurement<long> failure = Assert.Single(failed.GetMeasurementSnapshot());
        Assert.Equal(typeof(InvalidOperationException).FullName, failure.Tags["error.type"]);

        Activity[] jobs = [.. stopped.Where(a => a.OperationName == "cspnet.pool.job")];
        Activity[] processes = [.. stopped.Where(a => a.OperationName == "cspnet.pool.process")];
        Assert.Equal(2, jobs.Length);
        Assert.Equal(2, processes.Length);
        Assert.All(processes, p => Assert.Contains(jobs, j => j.TraceId == p.TraceId && j.SpanId == p.ParentSpanId));
        Assert.Single(jobs, j => j.Status == ActivityStatusCode.Error);
        Assert.Single(processes, p => p.Status == ActivityStatusCode.Error);
    }

    /// <summary>A channel homed in a reading program, and its writing end in another program.</summary>
    private static async Task<(AltingChannelIn<int> Input, IChannelOut<int> Output)> ConnectAsync(TestSystem system, string name)
    {
        CspNode reader = await system.NodeAsync("reader");
        CspNode writer = await system.NodeAsync("writer");
        return (await reader.GetOne2OneInAsync<int>(name), await writer.GetOne2OneOutAsync<int>(name));
    }

    private static MetricCollector<T> Collect<T>(string instrument)
        where T : struct => new(null, CspNetRemoteTelemetry.MeterName, instrument);

    private static long Sum(MetricCollector<long> collector, string direction) =>
        collector.GetMeasurementSnapshot().Where(m => Equals(m.Tags["network.io.direction"], direction)).Sum(m => m.Value);

    private static ActivityListener Listen(ConcurrentQueue<Activity> stopped)
    {
        var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == CspNetRemoteTelemetry.ActivitySourceName,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = stopped.Enqueue,
        };
        ActivitySource.AddActivityListener(listener);
        return listener;
    }
}
