using BenchmarkDotNet.Attributes;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The latency of one synchronous write of a <c>byte[]</c> to another program: the time from
/// sending the value until the writer knows the reader has it. Time per write.
/// </summary>
/// <remarks>
/// <list type="bullet">
/// <item><see cref="NamedWrite"/>: a named, unbuffered One2One channel homed in one CspNode (a
/// reader loop there reads every value); the other CspNode (same process, its own endpoint,
/// loopback) calls <c>WriteAsync</c>, which returns when the home's reader has taken the value.</item>
/// <item><see cref="RawGrpcStream"/> (baseline): one bidirectional gRPC stream; the client sends
/// the value as a bytes message, the server answers each with a 1-byte message.</item>
/// <item><see cref="RawTcpSocket"/>: one TCP connection; the value goes length-prefixed, the server
/// answers 1 byte.</item>
/// </list>
/// </remarks>
public class NamedWriteLatency : RemoteBenchmark
{
    /// <summary>Starts the two programs and the home's reader loop; one write opens the link.</summary>
    [GlobalSetup(Target = nameof(NamedWrite))]
    public async Task SetupNamedAsync()
    {
        await StartNamedAsync("bench/latency/" + Size, buffer: null, readForever: true);
        await NamedWrite();
    }

    /// <summary>One named write: returns when the reader in the home program has the value.</summary>
    [Benchmark]
    public ValueTask NamedWrite() => Output.WriteAsync(Value);

    /// <summary>One value on a raw gRPC bidirectional stream and its 1-byte answer.</summary>
    [Benchmark(Baseline = true)]
    public override async Task RawGrpcStream()
    {
        await Grpc!.SendAsync(Value, ack: true);
        _ = await Grpc.ReceiveAckAsync();
    }

    /// <summary>One length-prefixed value on a raw TCP socket and its 1-byte answer.</summary>
    [Benchmark]
    public override async Task RawTcpSocket()
    {
        await Tcp!.SendAsync(Value, ack: true);
        await Tcp.ReceiveAckAsync();
    }
}
