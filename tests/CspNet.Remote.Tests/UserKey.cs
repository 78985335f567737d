using CspNet.Remote.Internal.Security;
using CspNet.Remote.Internal.Transport;
using Grpc.Net.Client;

namespace CspNet.Remote.Tests;

/// <summary>
/// This user's cluster key, which NameServers, programs and pools use when none is configured:
/// tests that speak the protocols directly (not through a CspNode) present it as a program would.
/// </summary>
internal static class UserKey
{
    internal static string Value => ClusterKeys.Effective(null);

    /// <summary>A gRPC channel whose calls carry this user's key.</summary>
    internal static GrpcChannel Channel(string address, GrpcChannelOptions? options = null)
    {
        options ??= new GrpcChannelOptions();
#pragma warning disable CA2000 // The channel owns and disposes the handler (DisposeHttpClient).
        options.HttpHandler = new ClusterKeyHandler(Value, new SocketsHttpHandler());
#pragma warning restore CA2000
        options.DisposeHttpClient = true;
        return GrpcChannel.ForAddress(address, options);
    }

    /// <inheritdoc cref="Channel(string, GrpcChannelOptions?)"/>
    internal static GrpcChannel Channel(Uri address, GrpcChannelOptions? options = null) => Channel(address.ToString(), options);

    /// <summary>An HTTP client whose requests carry this user's key (the status page's header).</summary>
    internal static HttpClient Http(HttpMessageHandler? handler = null)
    {
        var http = new HttpClient(handler ?? new HttpClientHandler());
        http.DefaultRequestHeaders.Add(NodeTransport.ClusterKeyHeader, Value);
        return http;
    }
}
