using System;
using System.Net.Http;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Tasks;
using Grpc.Core;
using Grpc.Core.Interceptors;
using Grpc.Net.Client;

namespace CspNet.Remote.Internal;

/// <summary>HTTP/2 settings shared by every link and NameServer call of a program.</summary>
internal static class NodeTransport
{
    /// <summary>The metadata key that carries the cluster key.</summary>
    internal const string ClusterKeyHeader = "x-cspnet-cluster-key";

    // Large windows let one stream carry megabyte values at full speed; HTTP/2's 64 KiB default
    // stalls a 4 MB write on round trips of window updates.
    internal const int WindowSize = 16 << 20;

    /// <summary>A client channel to <paramref name="address"/> with keep-alive pings sized by the peer timeout.</summary>
    internal static GrpcChannel CreateChannel(CspNodeOptions options, Uri address)
    {
        TimeSpan half = options.PeerTimeout / 2 < TimeSpan.FromSeconds(1) ? TimeSpan.FromSeconds(1) : options.PeerTimeout / 2;
#pragma warning disable CA2000 // The channel owns and disposes the handler (DisposeHttpClient).
        var handler = new SocketsHttpHandler
        {
            // A peer that stops answering pings (its machine or network gone) fails the stream
            // within about PeerTimeout; a peer that exits is noticed at once by the connection reset.
            KeepAlivePingDelay = half,
            KeepAlivePingTimeout = half,
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.Always,
            InitialHttp2StreamWindowSize = WindowSize,
            ConnectTimeout = options.PeerTimeout,
            EnableMultipleHttp2Connections = true,
            PooledConnectionIdleTimeout = System.Threading.Timeout.InfiniteTimeSpan,
        };
#pragma warning restore CA2000
        return GrpcChannel.ForAddress(address, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            MaxReceiveMessageSize = MessageLimit(options),
            MaxSendMessageSize = MessageLimit(options),
        });
    }

    /// <summary>Largest single gRPC message: one chunk plus its frame.</summary>
    internal static int MessageLimit(CspNodeOptions options) => options.ChunkSize + (64 << 10);

    private static readonly WriteOptions Buffered = new(WriteFlags.BufferHint);

    /// <summary>
    /// Write options for a frame: buffered when more frames wait behind it, so a burst of frames
    /// (a chunked value, many processes' operations) costs one flush and one TCP send, not one each.
    /// </summary>
    internal static WriteOptions? FlushUnless(bool moreWaiting) => moreWaiting ? Buffered : null;

    internal static Metadata? CallHeaders(CspNodeOptions options) =>
        string.IsNullOrEmpty(options.ClusterKey) ? null : new Metadata { { ClusterKeyHeader, options.ClusterKey } };

    internal static bool KeyMatches(string expected, string? presented) =>
        presented is not null && CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(expected), Encoding.UTF8.GetBytes(presented));
}

/// <summary>Refuses calls that do not carry the cluster key, when one is configured.</summary>
internal abstract class ClusterKeyInterceptor : Interceptor
{
    /// <summary>The key callers must present, or null when none is required.</summary>
    protected abstract string? Key { get; }

    public override Task DuplexStreamingServerHandler<TRequest, TResponse>(IAsyncStreamReader<TRequest> requestStream, IServerStreamWriter<TResponse> responseStream, ServerCallContext context, DuplexStreamingServerMethod<TRequest, TResponse> continuation)
    {
        Check(context);
        return continuation(requestStream, responseStream, context);
    }

    public override Task<TResponse> UnaryServerHandler<TRequest, TResponse>(TRequest request, ServerCallContext context, UnaryServerMethod<TRequest, TResponse> continuation)
    {
        Check(context);
        return continuation(request, context);
    }

    private void Check(ServerCallContext context)
    {
        if (Key is { Length: > 0 } key && !NodeTransport.KeyMatches(key, context.RequestHeaders.GetValue(NodeTransport.ClusterKeyHeader)))
        {
            throw new RpcException(new Status(StatusCode.Unauthenticated, "This endpoint requires the cluster key (CspNodeOptions.ClusterKey, NameServerOptions.ClusterKey)."));
        }
    }
}

/// <summary>The cluster key check of a program's Link endpoint.</summary>
internal sealed class NodeKeyInterceptor(NodeRuntime node) : ClusterKeyInterceptor
{
    protected override string? Key => node.Options.ClusterKey;
}

/// <summary>Adds the cluster key to every call a client makes (gRPC metadata are HTTP/2 headers).</summary>
internal sealed class ClusterKeyHandler(string key, HttpMessageHandler inner) : DelegatingHandler(inner)
{
    protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, System.Threading.CancellationToken cancellationToken)
    {
        request.Headers.TryAddWithoutValidation(NodeTransport.ClusterKeyHeader, key);
        return base.SendAsync(request, cancellationToken);
    }
}
