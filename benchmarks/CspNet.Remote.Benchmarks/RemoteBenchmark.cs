using BenchmarkDotNet.Attributes;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// What the benchmark classes share: the value sizes, the value, and the three rigs (two CspNet
/// programs, raw gRPC, raw TCP). A class's targeted global setups start only the rig the
/// benchmark being run uses; the global cleanup disposes whatever was started.
/// </summary>
[Config(typeof(RemoteBenchmarkConfig))]
public abstract class RemoteBenchmark
{
    private CancellationTokenSource? _stopReading;
    private Task? _reading;

    /// <summary>The size of each value, in bytes: 1 B, 1 KB, 64 KB, 1 MB, 4 MB.</summary>
    [Params(1, 1 << 10, 64 << 10, 1 << 20, 4 << 20)]
    public int Size { get; set; }

    /// <summary>The value every operation sends (random bytes; the same array each time).</summary>
    private protected byte[] Value { get; private set; } = [];

    private protected NamedPair? Named { get; private set; }

    /// <summary>The writer program's end of the named channel.</summary>
    private protected IChannelOut<byte[]> Output { get; private set; } = null!;

    /// <summary>The home program's end of the named channel.</summary>
    private protected AltingChannelIn<byte[]> Input { get; private set; } = null!;

    private protected RawGrpc? Grpc { get; private set; }

    private protected RawTcp? Tcp { get; private set; }

    /// <summary>Starts the raw gRPC server and stream; one operation opens the connection.</summary>
    [GlobalSetup(Target = nameof(RawGrpcStream))]
    public async Task SetupGrpcAsync()
    {
        Value = NewValue();
        Grpc = await RawGrpc.StartAsync();
        await RawGrpcStream();
    }

    /// <summary>Connects the raw TCP sockets; one operation warms them.</summary>
    [GlobalSetup(Target = nameof(RawTcpSocket))]
    public async Task SetupTcpAsync()
    {
        Value = NewValue();
        Tcp = await RawTcp.StartAsync();
        await RawTcpSocket();
    }

    /// <summary>The raw gRPC baseline's operation (the derived class's benchmark).</summary>
    /// <returns>A task that completes when the operation is done.</returns>
    public abstract Task RawGrpcStream();

    /// <summary>The raw TCP baseline's operation (the derived class's benchmark).</summary>
    /// <returns>A task that completes when the operation is done.</returns>
    public abstract Task RawTcpSocket();

    /// <summary>Disposes whatever the global setup started.</summary>
    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        if (_stopReading is not null)
        {
            await _stopReading.CancelAsync();
            await _reading!;
            _stopReading.Dispose();
        }

        if (Named is not null)
        {
            await Named.DisposeAsync();
        }

        if (Grpc is not null)
        {
            await Grpc.DisposeAsync();
        }

        if (Tcp is not null)
        {
            await Tcp.DisposeAsync();
        }
    }

    /// <summary>
    /// Starts the NameServer and two programs; the home creates the One2One channel
    /// <paramref name="name"/> (with <paramref name="buffer"/>), the writer attaches to it.
    /// </summary>
    /// <param name="readForever">Whether a reader loop in the home takes every value until the cleanup.</param>
    private protected async Task StartNamedAsync(string name, IBuffer<byte[]>? buffer, bool readForever)
    {
        Value = NewValue();
        Named = await NamedPair.StartAsync();
        Input = await Named.Home.GetOne2OneInAsync(name, buffer);
        if (readForever)
        {
            _stopReading = new CancellationTokenSource();
            _reading = NamedPair.ReadForeverAsync(Input, _stopReading.Token);
        }

        Output = await Named.Writer.GetOne2OneOutAsync<byte[]>(name);
    }

    private byte[] NewValue()
    {
        var value = new byte[Size];
        Random.Shared.NextBytes(value);
        return value;
    }
}
