using CspNet.Remote.Internal.Transport;

namespace CspNet.Remote.Internal.Homes;

/// <summary>What the server side of a link needs from its program: the link context and the constructs hosted there.</summary>
internal interface IHomeNode : ILinkNode
{
    /// <summary>The constructs hosted here, by name.</summary>
    HomeDirectory Homes { get; }

    /// <summary>Where this program serves bulk lanes; null when it offers none.</summary>
    ILaneRegistry? Lanes => null;

    /// <summary>
    /// Hands a channel hosted here to the program at the other end of a stream, which asked for it
    /// (link.proto, BecomeHome), while this program goes on; null where homes do not move (no NameServer).
    /// </summary>
    System.Func<Home, HomeSession, System.Threading.CancellationToken, System.Threading.Tasks.Task>? GiveHome => null;
}

/// <summary>The bulk lane endpoint as a Link stream sees it: where clients connect, and the secrets that tie a connection to a stream.</summary>
internal interface ILaneRegistry
{
    /// <summary>The Unix domain socket clients on this host connect to.</summary>
    string SocketPath { get; }

    /// <summary>The TCP port clients on other hosts connect to, on the address they dialled; 0 when there is none.</summary>
    int TcpPort { get; }

    /// <summary>The host and network namespace <see cref="SocketPath"/> lives in (<c>Hello.lane_host</c>).</summary>
    string HostIdentity { get; }

    /// <summary>Opens a lane into <paramref name="inbox"/>: the secret its client presents.</summary>
    byte[] Open(LaneInbox inbox);

    /// <summary>Forgets a lane's secret (its stream ended): no later connection reaches the inbox.</summary>
    void Close(byte[] secret);
}
