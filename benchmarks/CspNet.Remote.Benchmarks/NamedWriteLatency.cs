using BenchmarkDotNet.Attributes;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The latency of one synchronous write of a <c>byte[]</c> to another program: the time from
/// sending the value until the writer knows the reader has it. Time per write; each invocation
/// does <see cref="Writes"/> writes back to back (<c>OperationsPerInvoke</c>), so BenchmarkDotNet's
/// per-invocation overhead (an async state machine, a task) is spread over them on every transport.
/// </summary>
/// <remarks>
/// <list type="bullet">
/// <item><see cref="NamedWrite"/>: a named, unbuffered One2One channel homed in one CspNode (a
/// reader loop there reads every value); the other CspNode (same process, its own endpoint,
/// loopback) calls <c>WriteAsync</c>, which returns when the home's reader has taken the value.</item>
/// <item><see cref="RawGrpcStream"/> (baseline): one bidirectional gRPC stream; the client sends
/// the value as a bytes message, the server answers each with a 1-byte message.</item>
/// <item><see cref="RawGrpcPull"/>: the same exchange the other way round on the wire: the
/// receiver is the gRPC client and opened the stream; the sender (the server) sends the value as a
/// response message and the receiver answers 1 byte on the request side. It measures what a value
/// costs in gRPC's response direction.</item>
/// <item><see cref="RawTcpSocket"/>: one TCP connection; the value goes length-prefixed, the server
/// answers 1 byte.</item>
/// </list>
/// The threading diagnoser counts ThreadPool work items per write: a measure the machine's load
/// does not move.
/// </remarks>
[ThreadingDiagnoser]
public class NamedWriteLatency : RemoteBenchmark
{
    /// <summary>Writes per invocation.</summary>
    public const int Writes = 16;

    /// <summary>Starts the two programs and the home's reader loop; one write opens the link.</summary>
    [GlobalSetup(Target = nameof(NamedWrite))]
    public async Task SetupNamedAsync()
    {
        await StartNamedAsync("bench/latency/" + Size, buffer: null, readForever: true);
        await Output.WriteAsync(Value);
    }

    /// <summary>
    /// As <see cref="SetupNamedAsync"/>, with a buffered channel (16 slots): writes spend credits,
    /// so <see cref="NamedWrite"/> measures the buffered stream's writer; for <c>probe NamedStream</c>.
    /// </summary>
    public async Task SetupNamedStreamAsync()
    {
        await StartNamedAsync("bench/stream/" + Size, new FifoBuffer<byte[]>(16), readForever: true);
        await Output.WriteAsync(Value);
    }

    /// <summary>Starts the raw gRPC server and the receiver's Pull stream; one value opens it.</summary>
    [GlobalSetup(Target = nameof(RawGrpcPull))]
    public async Task SetupPullAsync()
    {
        await SetupGrpcAsync();
        await Grpc!.PushAsync(Value);
    }

    /// <summary>Named writes: each returns when the reader in the home program has the value.</summary>
    [Benchmark(OperationsPerInvoke = Writes)]
    public async Task NamedWrite()
    {
        for (int i = 0; i < Writes; i++)
        {
            await Output.WriteAsync(Value);
        }
    }

    /// <summary>Values on a raw gRPC bidirectional stream, each waiting for its 1-byte answer.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Writes)]
    public override async Task RawGrpcStream()
    {
        for (int i = 0; i < Writes; i++)
        {
            await Grpc!.SendAsync(Value, ack: true);
            _ = await Grpc.ReceiveAckAsync();
        }
    }

    /// <summary>Values sent as responses on a stream the receiver opened, each waiting for its 1-byte answer.</summary>
    [Benchmark(OperationsPerInvoke = Writes)]
    public async Task RawGrpcPull()
    {
        for (int i = 0; i < Writes; i++)
        {
            await Grpc!.PushAsync(Value);
        }
    }

    /// <summary>Length-prefixed values on a raw TCP socket, each waiting for its 1-byte answer.</summary>
    [Benchmark(OperationsPerInvoke = Writes)]
    public override async Task RawTcpSocket()
    {
        for (int i = 0; i < Writes; i++)
        {
            await Tcp!.SendAsync(Value, ack: true);
            await Tcp.ReceiveAckAsync();
        }
    }
}
