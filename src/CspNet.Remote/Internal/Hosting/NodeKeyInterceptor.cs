using CspNet.Remote.Internal.Transport;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>The cluster key check of a program's Link endpoint.</summary>
internal sealed class NodeKeyInterceptor(NodeRuntime node) : ClusterKeyInterceptor
{
    protected override string? Key => node.Options.ClusterKey;
}
