using CspNet.Remote.Internal.Transport;

namespace CspNet.Remote.Internal.Homes;

/// <summary>What the server side of a link needs from its program: the link context and the constructs hosted there.</summary>
internal interface IHomeNode : ILinkNode
{
    /// <summary>The constructs hosted here, by name.</summary>
    HomeDirectory Homes { get; }
}
