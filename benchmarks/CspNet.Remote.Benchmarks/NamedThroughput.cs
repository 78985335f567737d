using BenchmarkDotNet.Attributes;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// One-way throughput to another program: <see cref="Burst"/> values of <c>byte[]</c> sent back to
/// back, the invocation ending when the receiver has all of them. Time per value
/// (<c>OperationsPerInvoke</c>).
/// </summary>
/// <remarks>
/// <list type="bullet">
/// <item><see cref="NamedBuffered"/>: a named One2One channel with a <see cref="FifoBuffer{T}"/> of
/// <see cref="BufferCapacity"/> values, homed in one CspNode; the other CspNode writes the burst
/// with <c>WriteAsync</c> while a reader in the home reads the burst. A write that holds a credit
/// (a buffer slot the home reserved for the writer, <see cref="CspNodeOptions.PipelineBufferedWrites"/>)
/// returns once its value is handed to the link; one without waits for the home's answer.</item>
/// <item><see cref="RawGrpcStream"/> (baseline): the burst on one bidirectional gRPC stream; the
/// server counts the values and answers once, after the last.</item>
/// <item><see cref="RawTcpSocket"/>: the burst as length-prefixed values on one TCP connection; the
/// server answers 1 byte after the last.</item>
/// </list>
/// </remarks>
public class NamedThroughput : RemoteBenchmark
{
    /// <summary>Values per invocation.</summary>
    public const int Burst = 64;

    /// <summary>The capacity of the named channel's buffer, in values.</summary>
    public const int BufferCapacity = 16;

    /// <summary>Starts the two programs; one burst opens the link.</summary>
    [GlobalSetup(Target = nameof(NamedBuffered))]
    public async Task SetupNamedAsync()
    {
        await StartNamedAsync("bench/throughput/" + Size, new FifoBuffer<byte[]>(BufferCapacity), readForever: false);
        await NamedBuffered();
    }

    /// <summary>A burst on the buffered named channel, read in the home program.</summary>
    [Benchmark(OperationsPerInvoke = Burst)]
    public async Task NamedBuffered()
    {
        Task reading = ReadBurstAsync(Input);
        for (int i = 0; i < Burst; i++)
        {
            await Output.WriteAsync(Value);
        }

        await reading;
    }

    /// <summary>A burst on a raw gRPC bidirectional stream, acknowledged once.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Burst)]
    public override async Task RawGrpcStream()
    {
        for (int i = 0; i < Burst; i++)
        {
            await Grpc!.SendAsync(Value, ack: i == Burst - 1);
        }

        long received = await Grpc!.ReceiveAckAsync();
        if (received != Burst)
        {
            throw new InvalidOperationException($"The raw gRPC server received {received} values of {Burst}.");
        }
    }

    /// <summary>A burst on a raw TCP socket, acknowledged once.</summary>
    [Benchmark(OperationsPerInvoke = Burst)]
    public override async Task RawTcpSocket()
    {
        for (int i = 0; i < Burst; i++)
        {
            await Tcp!.SendAsync(Value, ack: i == Burst - 1);
        }

        await Tcp!.ReceiveAckAsync();
    }

    private static async Task ReadBurstAsync(AltingChannelIn<byte[]> input)
    {
        for (int i = 0; i < Burst; i++)
        {
            _ = await input.ReadAsync();
        }
    }
}
