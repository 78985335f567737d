using CspNet.Remote.Internal.Transport;
using Grpc.Core;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Workers;

/// <summary>Refuses WorkerPool calls that do not carry the pool's token, when one is configured.</summary>
/// <remarks>
/// The token arrives as <c>authorization: Bearer token</c> and is compared in constant time, as
/// the cluster key is (NodeTransport.KeyMatches), so the comparison's time tells an attacker nothing.
/// Every refusal is logged: a caller trying tokens is worth an operator's attention.
/// </remarks>
internal sealed partial class PoolTokenInterceptor(PoolRuntime pool) : CallerCheckInterceptor
{
    private const string Scheme = "Bearer ";

    protected override void Check(ServerCallContext context)
    {
        if (pool.Options.ClientCertificateAuthority is { } authority)
        {
            System.Security.Cryptography.X509Certificates.X509Certificate2? certificate = context.GetHttpContext().Connection.ClientCertificate;
            if (certificate is null || !Security.Certificates.ChainsTo(certificate, authority, Security.Certificates.ClientAuthentication))
            {
                LogRefused(pool.Logger, context.Method, context.Peer, certificate is null ? "no client certificate" : "a client certificate not issued by its authority for client authentication");
                throw new RpcException(new Status(StatusCode.Unauthenticated, "This worker pool requires a client certificate issued by its authority for client authentication (CspNodeOptions.WorkerPoolClientCertificate; a server certificate is not one)."));
            }
        }

        if (pool.Options.Token is not { Length: > 0 } token)
        {
            if (pool.Options.ClientCertificateAuthority is null && !NodeTransport.KeyMatches(pool.ClusterKey, context.RequestHeaders.GetValue(NodeTransport.ClusterKeyHeader)))
            {
                // No token and no certificates: the pool's cluster key (by default, its user's) is the credential.
                LogRefused(pool.Logger, context.Method, context.Peer, "no cluster key or another one");
                throw new RpcException(new Status(StatusCode.Unauthenticated, "This worker pool requires the cluster key (CspNodeOptions.ClusterKey; by default, the key of the user that runs the pool)."));
            }

            return;
        }

        string? presented = context.RequestHeaders.GetValue(WorkerProtocol.AuthorizationHeader);
        if (presented is null || !presented.StartsWith(Scheme, System.StringComparison.Ordinal))
        {
            LogRefused(pool.Logger, context.Method, context.Peer, "no token");
            throw new RpcException(new Status(StatusCode.Unauthenticated, "This worker pool requires a token: set CspNodeOptions.WorkerPoolToken in the calling program."));
        }

        if (!NodeTransport.KeyMatches(token, presented[Scheme.Length..]))
        {
            LogRefused(pool.Logger, context.Method, context.Peer, "wrong token");
            throw new RpcException(new Status(StatusCode.Unauthenticated, "The worker pool token is wrong: set CspNodeOptions.WorkerPoolToken in the calling program to the pool's token (WorkerPoolOptions.Token)."));
        }
    }

    [LoggerMessage(120, LogLevel.Warning, "Refused {Method} from {Peer}: {Why}")]
    private static partial void LogRefused(ILogger logger, string method, string peer, string why);
}
