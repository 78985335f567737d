using CspNet.Remote.Internal;

namespace CspNet.Remote.Protocol;

/// <summary>A client frame, and the pooled array its data lives in when it was received (see <see cref="LinkMarshaller"/>).</summary>
internal sealed partial class ClientFrame : IPooledFrame
{
    /// <inheritdoc/>
    public RentedBuffer? Rented { get; set; }
}

/// <summary>A home frame, and the pooled array its data lives in when it was received (see <see cref="LinkMarshaller"/>).</summary>
internal sealed partial class HomeFrame : IPooledFrame
{
    /// <inheritdoc/>
    public RentedBuffer? Rented { get; set; }
}
