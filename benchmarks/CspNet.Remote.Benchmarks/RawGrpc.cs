using System.Net;
using CspNet.Remote.Benchmarks.Raw;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// The raw gRPC baseline: a Kestrel h2c server on 127.0.0.1 (port 0) serving <c>RawBench</c>, and a
/// client holding one bidirectional <c>Exchange</c> stream to it, both in this process. HTTP/2
/// windows and message limits are set as CspNet.Remote sets its own (NodeTransport, NodeServer),
/// so that the two differ only in what travels on the stream. A second stream, <c>Pull</c>, opened
/// on first use, carries values the other way: the client receives them as responses and answers
/// each on its request side, while this process's server side sends them (<see cref="PushAsync"/>).
/// </summary>
internal sealed class RawGrpc : IAsyncDisposable
{
    // As CspNet.Remote's NodeTransport.WindowSize: a 4 MB message is not throttled by window updates.
    private const int WindowSize = 16 << 20;

    // The largest benchmark value (4 MB) in one message, plus room for framing.
    private const int MessageLimit = 8 << 20;

    private readonly WebApplication? _server;
    private readonly GrpcChannel _channel;
    private readonly AsyncDuplexStreamingCall<Value, Ack> _call;
    private readonly PullStreams? _pullServer;
    private AsyncDuplexStreamingCall<Ack, Value>? _pull;
    private Task? _pullReceiver;

    private RawGrpc(WebApplication? server, GrpcChannel channel, AsyncDuplexStreamingCall<Value, Ack> call)
    {
        _server = server;
        _channel = channel;
        _call = call;
        _pullServer = server?.Services.GetRequiredService<PullStreams>();
    }

    /// <summary>Starts the server and connects a client in this process.</summary>
    internal static async Task<RawGrpc> StartAsync()
    {
        (WebApplication server, string address) = await StartServerAsync();
        GrpcChannel channel = OpenChannel(address);
        return new RawGrpc(server, channel, new RawBench.RawBenchClient(channel).Exchange());
    }

    /// <summary>Connects a client to a server another program started (<see cref="StartServerAsync"/>); it cannot <see cref="PushAsync"/>.</summary>
    internal static RawGrpc Connect(string address)
    {
        GrpcChannel channel = OpenChannel(address);
        return new RawGrpc(null, channel, new RawBench.RawBenchClient(channel).Exchange());
    }

    /// <summary>Starts the server alone on 127.0.0.1 (port 0); returns it and its address.</summary>
    internal static async Task<(WebApplication Server, string Address)> StartServerAsync()
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [], ApplicationName = "CspNet.Remote.Benchmarks" });
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.Listen(IPAddress.Loopback, 0, listen => listen.Protocols = HttpProtocols.Http2);
            kestrel.AddServerHeader = false;
            kestrel.Limits.MaxRequestBodySize = null;
            kestrel.Limits.MinRequestBodyDataRate = null;
            kestrel.Limits.Http2.InitialConnectionWindowSize = WindowSize;
            kestrel.Limits.Http2.InitialStreamWindowSize = WindowSize;
        });
        builder.Services.AddSingleton<PullStreams>();
        builder.Services.AddGrpc(grpc =>
        {
            grpc.MaxReceiveMessageSize = MessageLimit;
            grpc.MaxSendMessageSize = MessageLimit;
        });
        WebApplication server = builder.Build();
        server.MapGrpcService<RawBenchService>();
        await server.StartAsync();

        return (server, server.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
    }

    private static GrpcChannel OpenChannel(string address)
    {
#pragma warning disable CA2000 // The channel owns and disposes the handler (DisposeHttpClient).
        var handler = new SocketsHttpHandler
        {
            InitialHttp2StreamWindowSize = WindowSize,
            PooledConnectionIdleTimeout = Timeout.InfiniteTimeSpan,
        };
#pragma warning restore CA2000
        return GrpcChannel.ForAddress(address, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            MaxReceiveMessageSize = MessageLimit,
            MaxSendMessageSize = MessageLimit,
        });
    }

    /// <summary>Sends one value; the server answers it with an <see cref="Ack"/> if <paramref name="ack"/>.</summary>
    internal Task SendAsync(byte[] value, bool ack) =>
        _call.RequestStream.WriteAsync(new Value { Data = UnsafeByteOperations.UnsafeWrap(value), Ack = ack });

    /// <summary>Waits for the server's next <see cref="Ack"/>; returns how many values it acknowledges.</summary>
    internal async Task<long> ReceiveAckAsync()
    {
        if (!await _call.ResponseStream.MoveNext(CancellationToken.None))
        {
            throw new InvalidOperationException("The raw gRPC server closed the stream.");
        }

        return _call.ResponseStream.Current.Count;
    }

    /// <summary>
    /// Sends one value from the server on the Pull stream (opened by the first call) and waits for
    /// the client's 1-byte answer.
    /// </summary>
    internal async Task PushAsync(byte[] value)
    {
        if (_pull is null)
        {
            _pull = new RawBench.RawBenchClient(_channel).Pull();
            _pullReceiver = ReceivePulledAsync(_pull);
        }

        PullStreams pullServer = _pullServer ?? throw new InvalidOperationException("A client connected to another program's server cannot push.");
        (IAsyncStreamReader<Ack> acks, IServerStreamWriter<Value> values) = await pullServer.Opened.Task;
        await values.WriteAsync(new Value { Data = UnsafeByteOperations.UnsafeWrap(value), Ack = true });
        if (!await acks.MoveNext(CancellationToken.None))
        {
            throw new InvalidOperationException("The raw gRPC client closed the Pull stream.");
        }
    }

    /// <summary>The receiving client of the Pull stream: answers every value with one Ack.</summary>
    private static async Task ReceivePulledAsync(AsyncDuplexStreamingCall<Ack, Value> pull)
    {
        var ack = new Ack { Data = RawBenchService.OneByte, Count = 1 };
        while (await pull.ResponseStream.MoveNext(CancellationToken.None))
        {
            await pull.RequestStream.WriteAsync(ack);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_pull is not null)
        {
            await _pull.RequestStream.CompleteAsync();
            _pullServer!.Done.TrySetResult();
            await _pullReceiver!;
            _pull.Dispose();
        }

        await _call.RequestStream.CompleteAsync();
        while (await _call.ResponseStream.MoveNext(CancellationToken.None))
        {
        }

        _call.Dispose();
        _channel.Dispose();
        if (_server is not null)
        {
            await _server.StopAsync();
            await _server.DisposeAsync();
        }
    }

    /// <summary>Counts the values of the stream and answers each one that asks for an acknowledgement.</summary>
    private sealed class RawBenchService(PullStreams pull) : RawBench.RawBenchBase
    {
        internal static readonly ByteString OneByte = ByteString.CopyFrom(1);

        /// <summary>Hands the stream to <see cref="PushAsync"/>, which sends on it, until the rig is disposed.</summary>
        public override async Task Pull(IAsyncStreamReader<Ack> requestStream, IServerStreamWriter<Value> responseStream, ServerCallContext context)
        {
            pull.Opened.TrySetResult((requestStream, responseStream));
            await pull.Done.Task.WaitAsync(context.CancellationToken);
        }

        public override async Task Exchange(IAsyncStreamReader<Value> requestStream, IServerStreamWriter<Ack> responseStream, ServerCallContext context)
        {
            long count = 0;
            while (await requestStream.MoveNext(context.CancellationToken))
            {
                count++;
                if (requestStream.Current.Ack)
                {
                    await responseStream.WriteAsync(new Ack { Data = OneByte, Count = count });
                    count = 0;
                }
            }
        }
    }
}

/// <summary>The server's side of the one Pull stream, for <see cref="RawGrpc.PushAsync"/>.</summary>
internal sealed class PullStreams
{
    /// <summary>Set when the client has opened the stream.</summary>
    internal TaskCompletionSource<(IAsyncStreamReader<Ack> Acks, IServerStreamWriter<Value> Values)> Opened { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Set when the rig is disposed: the handler returns and the stream ends.</summary>
    internal TaskCompletionSource Done { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
}
