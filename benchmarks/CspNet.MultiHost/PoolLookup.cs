using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Grpc.Net.Client;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.MultiHost;

/// <summary>
/// The NameServer's pool list as DistParallel reads it (one ListPools call), made by the harness's
/// program itself over the NameServer's public gRPC protocol: the library keeps its client internal.
/// </summary>
internal sealed class PoolLookup : IDisposable
{
    private const string ClusterKeyHeader = "x-cspnet-cluster-key";
    private readonly GrpcChannel _channel;
    private readonly Proto.NameServer.NameServerClient _client;
    private readonly Grpc.Core.Metadata _headers;

    internal PoolLookup(Uri nameServer, X509Certificate2 certificate, X509Certificate2 authority, string clusterKey)
    {
        var handler = new SocketsHttpHandler
        {
            SslOptions = new SslClientAuthenticationOptions
            {
                ClientCertificates = [certificate],
                RemoteCertificateValidationCallback = (_, presented, _, _) => IssuedBy(presented, authority),
            },
        };
        _channel = GrpcChannel.ForAddress(nameServer, new GrpcChannelOptions { HttpHandler = handler, DisposeHttpClient = true });
        _client = new Proto.NameServer.NameServerClient(_channel);
        _headers = new Grpc.Core.Metadata { { ClusterKeyHeader, clusterKey } };
    }

    /// <summary>The names of the pools with a free worker.</summary>
    internal async Task<List<string>> ListAsync()
    {
        Proto.ListPoolsReply reply = await _client.ListPoolsAsync(new Proto.ListPoolsRequest { MinFree = 1 }, _headers, DateTime.UtcNow.AddSeconds(30));
        return reply.Pools.Select(pool => pool.Name).ToList();
    }

    public void Dispose() => _channel.Dispose();

    private static bool IssuedBy(X509Certificate? presented, X509Certificate2 authority)
    {
        if (presented is null)
        {
            return false;
        }

        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        using var leaf = new X509Certificate2(presented);
        return chain.Build(leaf);
    }
}
