using CspNet.NameServer.Internal.StatusReporting;
using CspNet.Remote.Internal.Transport;
using Grpc.Core;
using Microsoft.Extensions.Options;

namespace CspNet.NameServer.Internal;

/// <summary>The cluster key check of the NameServer service (<see cref="NameServerOptions.ClusterKey"/>).</summary>
internal sealed class NameServerKeyInterceptor(IOptions<NameServerOptions> options, RecentFailures failures) : ClusterKeyInterceptor
{
    protected override string? Key => options.Value.ClusterKey;

    protected override void Check(ServerCallContext context)
    {
        try
        {
            base.Check(context);
        }
        catch (RpcException)
        {
            // The status page lists refused callers: a program started without the key shows up there.
            failures.Record(FailureKind.Unauthenticated, $"{context.Method} from {context.Peer} came without the cluster key.");
            throw;
        }
    }
}
