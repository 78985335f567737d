using System.Threading.Channels;
using BenchmarkDotNet.Attributes;
using Parallel = CspNet.Parallel;

namespace CspNet.Benchmarks;

/// <summary>
/// One-to-one ping-pong: process A writes <c>i</c> on the ping channel, process B reads it and
/// writes it back on the pong channel, A reads the reply; <see cref="RoundTrips"/> times per
/// invocation. Every reported time is per round trip (two channel communications, two wake-ups).
/// </summary>
/// <remarks>
/// <para>
/// Every variant runs its two processes with a <see cref="Parallel"/> built once in
/// <see cref="Setup"/>: thread processes run on threads of <see cref="CSPThreadPool.Default"/>
/// (reused from one invocation to the next), async processes on the .NET thread pool. The cost of
/// starting and joining the two processes is paid once per invocation and spread over
/// <see cref="RoundTrips"/> round trips.
/// </para>
/// <para>
/// Baseline: System.Threading.Channels <c>Channel.CreateBounded&lt;int&gt;(0)</c>. On .NET 10
/// capacity 0 is accepted and gives a <c>RendezvousChannel&lt;int&gt;</c>: a write completes
/// only when a reader takes the value (TryWrite fails with no waiting reader), i.e. the same
/// unbuffered semantics as <see cref="One2OneChannel{T}"/>.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[SimpleJob(launchCount: 3, warmupCount: 3, iterationCount: 10)]
public class PingPongBenchmarks
{
    /// <summary>Round trips per benchmark invocation.</summary>
    public const int RoundTrips = 10_000;

    private readonly One2OneChannel<int> _ping = new();
    private readonly One2OneChannel<int> _pong = new();
    private Channel<int> _stcPing = null!;
    private Channel<int> _stcPong = null!;

    private Parallel _stcAsync = null!;
    private Parallel _stcThreads = null!;
    private Parallel _cspThreads = null!;
    private Parallel _cspAsync = null!;
    private Parallel _cspThreadPingAsyncPong = null!;
    private Parallel _cspAsyncPingThreadPong = null!;

    [GlobalSetup]
    public void Setup()
    {
        var options = new BoundedChannelOptions(0) { SingleReader = true, SingleWriter = true };
        _stcPing = Channel.CreateBounded<int>(options);
        _stcPong = Channel.CreateBounded<int>(options);

        _stcAsync = new Parallel();
        _stcAsync.AddProcess(_ => PingPong.StcPingAsync(_stcPing, _stcPong, RoundTrips));
        _stcAsync.AddProcess(_ => PingPong.StcPongAsync(_stcPing, _stcPong, RoundTrips));

        _stcThreads = new Parallel();
        _stcThreads.AddProcess(() => PingPong.StcPingBlocking(_stcPing, _stcPong, RoundTrips));
        _stcThreads.AddProcess(() => PingPong.StcPongBlocking(_stcPing, _stcPong, RoundTrips));

        _cspThreads = new Parallel();
        _cspThreads.AddProcess(() => PingPong.CspPing(_ping, _pong, RoundTrips));
        _cspThreads.AddProcess(() => PingPong.CspPong(_ping, _pong, RoundTrips));

        _cspAsync = new Parallel();
        _cspAsync.AddProcess(_ => PingPong.CspPingAsync(_ping, _pong, RoundTrips));
        _cspAsync.AddProcess(_ => PingPong.CspPongAsync(_ping, _pong, RoundTrips));

        _cspThreadPingAsyncPong = new Parallel();
        _cspThreadPingAsyncPong.AddProcess(() => PingPong.CspPing(_ping, _pong, RoundTrips));
        _cspThreadPingAsyncPong.AddProcess(_ => PingPong.CspPongAsync(_ping, _pong, RoundTrips));

        _cspAsyncPingThreadPong = new Parallel();
        _cspAsyncPingThreadPong.AddProcess(_ => PingPong.CspPingAsync(_ping, _pong, RoundTrips));
        _cspAsyncPingThreadPong.AddProcess(() => PingPong.CspPong(_ping, _pong, RoundTrips));
    }

    /// <summary>System.Threading.Channels rendezvous channels, two async loops.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = RoundTrips)]
    public Task StcRendezvousAsync() => _stcAsync.RunAsync();

    /// <summary>
    /// System.Threading.Channels rendezvous channels, two blocking threads (sync over async:
    /// a ValueTask that is already complete is consumed directly, otherwise
    /// <c>.AsTask().GetAwaiter().GetResult()</c>).
    /// </summary>
    [Benchmark(OperationsPerInvoke = RoundTrips)]
    public Task StcRendezvousThreads() => _stcThreads.RunAsync();

    /// <summary>CspNet, two thread processes using blocking Read/Write.</summary>
    [Benchmark(OperationsPerInvoke = RoundTrips)]
    public Task CspThreads() => _cspThreads.RunAsync();

    /// <summary>CspNet, two async processes using ReadAsync/WriteAsync.</summary>
    [Benchmark(OperationsPerInvoke = RoundTrips)]
    public Task CspAsync() => _cspAsync.RunAsync();

    /// <summary>CspNet mixed: the pinger is a thread process, the ponger an async process.</summary>
    [Benchmark(OperationsPerInvoke = RoundTrips)]
    public Task CspMixedThreadPingAsyncPong() => _cspThreadPingAsyncPong.RunAsync();

    /// <summary>CspNet mixed: the pinger is an async process, the ponger a thread process.</summary>
    [Benchmark(OperationsPerInvoke = RoundTrips)]
    public Task CspMixedAsyncPingThreadPong() => _cspAsyncPingThreadPong.RunAsync();
}

/// <summary>The process bodies of the ping-pong benchmarks.</summary>
internal static class PingPong
{
    internal static void CspPing(One2OneChannel<int> ping, One2OneChannel<int> pong, int count)
    {
        for (int i = 0; i < count; i++)
        {
            ping.Write(i);
            Check(pong.Read(), i);
        }
    }

    internal static void CspPong(One2OneChannel<int> ping, One2OneChannel<int> pong, int count)
    {
        for (int i = 0; i < count; i++)
        {
            pong.Write(ping.Read());
        }
    }

    internal static async Task CspPingAsync(One2OneChannel<int> ping, One2OneChannel<int> pong, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await ping.WriteAsync(i);
            Check(await pong.ReadAsync(), i);
        }
    }

    internal static async Task CspPongAsync(One2OneChannel<int> ping, One2OneChannel<int> pong, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await pong.WriteAsync(await ping.ReadAsync());
        }
    }

    internal static async Task StcPingAsync(Channel<int> ping, Channel<int> pong, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await ping.Writer.WriteAsync(i);
            Check(await pong.Reader.ReadAsync(), i);
        }
    }

    internal static async Task StcPongAsync(Channel<int> ping, Channel<int> pong, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await pong.Writer.WriteAsync(await ping.Reader.ReadAsync());
        }
    }

    internal static void StcPingBlocking(Channel<int> ping, Channel<int> pong, int count)
    {
        for (int i = 0; i < count; i++)
        {
            WriteBlocking(ping.Writer, i);
            Check(ReadBlocking(pong.Reader), i);
        }
    }

    internal static void StcPongBlocking(Channel<int> ping, Channel<int> pong, int count)
    {
        for (int i = 0; i < count; i++)
        {
            WriteBlocking(pong.Writer, ReadBlocking(ping.Reader));
        }
    }

    // Sync over async. GetResult may be called on a ValueTask only once it has completed (the
    // pooled IValueTaskSource behind a pending one throws), so a pending one is blocked on
    // through AsTask(); Task's wait spins briefly, then blocks.
    private static void WriteBlocking(ChannelWriter<int> writer, int value)
    {
        ValueTask write = writer.WriteAsync(value);
        if (write.IsCompleted)
        {
            write.GetAwaiter().GetResult();
        }
        else
        {
            write.AsTask().GetAwaiter().GetResult();
        }
    }

    private static int ReadBlocking(ChannelReader<int> reader)
    {
        ValueTask<int> read = reader.ReadAsync();
        return read.IsCompleted ? read.GetAwaiter().GetResult() : read.AsTask().GetAwaiter().GetResult();
    }

    private static void Check(int reply, int expected)
    {
        if (reply != expected)
        {
            throw new InvalidOperationException($"Ping-pong out of step: sent {expected}, got {reply}.");
        }
    }
}
