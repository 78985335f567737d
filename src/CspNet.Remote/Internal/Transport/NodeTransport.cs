using System;
using System.Net.Http;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Tasks;
using Grpc.Core;
using Grpc.Core.Interceptors;
using Grpc.Net.Client;

namespace CspNet.Remote.Internal.Transport;

/// <summary>HTTP/2 settings shared by every link and NameServer call of a program.</summary>
internal static class NodeTransport
{
    /// <summary>The metadata key that carries the cluster key.</summary>
    internal const string ClusterKeyHeader = "x-cspnet-cluster-key";

    // Large windows let one stream carry megabyte values at full speed; HTTP/2's 64 KiB default
    // stalls a 4 MB write on round trips of window updates.
    internal const int WindowSize = 16 << 20;

    /// <summary>
    /// The keep-alive ping delay and timeout for a peer timeout: half of it each (at least a
    /// second). Kestrel and SocketsHttpHandler look at their ping timers once a second, so a peer
    /// that stops answering is given up within the peer timeout plus up to two seconds; a shorter
    /// interval would give up on a live peer whose answers a loaded machine delays.
    /// </summary>
    internal static TimeSpan KeepAliveInterval(TimeSpan peerTimeout) =>
        peerTimeout / 2 < TimeSpan.FromSeconds(1) ? TimeSpan.FromSeconds(1) : peerTimeout / 2;

    /// <summary>
    /// How long this program's server waits for a peer's TLS handshake: Kestrel's default (10 s),
    /// or the peer timeout where a program allows its peers longer (a loaded machine), since a
    /// dropped handshake is a lost program to the peer.
    /// </summary>
    internal static TimeSpan HandshakeTimeout(TimeSpan peerTimeout) =>
        peerTimeout > TimeSpan.FromSeconds(10) ? peerTimeout : TimeSpan.FromSeconds(10);

    /// <summary>
    /// A client handler whose connections fail within about <see cref="CspNodeOptions.PeerTimeout"/>
    /// when the peer's machine or network is gone (keep-alive pings); a peer that exits is noticed
    /// at once by the connection reset.
    /// </summary>
    internal static SocketsHttpHandler NewHandler(CspNodeOptions options)
    {
        TimeSpan half = KeepAliveInterval(options.PeerTimeout);
        return new SocketsHttpHandler
        {
            KeepAlivePingDelay = half,
            KeepAlivePingTimeout = half,
            KeepAlivePingPolicy = HttpKeepAlivePingPolicy.Always,
            ConnectTimeout = options.PeerTimeout,
            SslOptions = options.TrustedCertificate is { } trusted
                ? Security.Certificates.ClientOptions(trusted, options.Certificate)
                : new System.Net.Security.SslClientAuthenticationOptions(),
        };
    }

    /// <summary>A client channel to <paramref name="address"/> with keep-alive pings sized by the peer timeout.</summary>
    internal static GrpcChannel CreateChannel(CspNodeOptions options, Uri address)
    {
#pragma warning disable CA2000 // The channel owns and disposes the handler (DisposeHttpClient).
        SocketsHttpHandler handler = NewHandler(options);
#pragma warning restore CA2000
        handler.InitialHttp2StreamWindowSize = WindowSize;
        handler.EnableMultipleHttp2Connections = true;
        handler.PooledConnectionIdleTimeout = System.Threading.Timeout.InfiniteTimeSpan;
        return GrpcChannel.ForAddress(address, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            MaxReceiveMessageSize = MessageLimit(options),
            MaxSendMessageSize = MessageLimit(options),
        });
    }

    /// <summary>The address of a peer's endpoint: https when this program trusts a cluster authority (every program then serves TLS).</summary>
    internal static Uri PeerAddress(CspNodeOptions options, string host, int port) =>
        new($"{(options.TrustedCertificate is null ? "http" : "https")}://{FormatHost(host)}:{port}");

    private static string FormatHost(string host) => host.Contains(':', StringComparison.Ordinal) && !host.StartsWith('[') ? $"[{host}]" : host;

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

/// <summary>
/// A server interceptor that checks every unary and duplex-streaming call before it runs (the
/// kinds the CspNet services have); <see cref="Check"/> throws UNAUTHENTICATED to refuse one.
/// </summary>
internal abstract class CallerCheckInterceptor : Interceptor
{
    /// <summary>Throws an <see cref="RpcException"/> with <see cref="StatusCode.Unauthenticated"/> if the caller may not call.</summary>
    protected abstract void Check(ServerCallContext context);

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
}

/// <summary>Refuses calls that do not carry the cluster key, when one is configured.</summary>
internal abstract class ClusterKeyInterceptor : CallerCheckInterceptor
{
    /// <summary>The key callers must present, or null when none is required.</summary>
    protected abstract string? Key { get; }

    protected override void Check(ServerCallContext context)
    {
        if (Key is { Length: > 0 } key && !NodeTransport.KeyMatches(key, context.RequestHeaders.GetValue(NodeTransport.ClusterKeyHeader)))
        {
            throw new RpcException(new Status(StatusCode.Unauthenticated, "This endpoint requires the cluster key (CspNodeOptions.ClusterKey, NameServerOptions.ClusterKey)."));
        }
    }
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
