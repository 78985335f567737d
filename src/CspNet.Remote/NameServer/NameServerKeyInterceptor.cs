using CspNet.Remote.Internal;
using Microsoft.Extensions.Options;

namespace CspNet.Remote.NameServer;

/// <summary>The cluster key check of the NameServer service (<see cref="NameServerOptions.ClusterKey"/>).</summary>
internal sealed class NameServerKeyInterceptor(IOptions<NameServerOptions> options) : ClusterKeyInterceptor
{
    protected override string? Key => options.Value.ClusterKey;
}
