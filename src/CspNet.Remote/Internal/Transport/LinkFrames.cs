using CspNet.Remote.Internal.Transport;


namespace CspNet.Remote.Protocol;

/// <summary>A client frame, and the pooled array its data lives in when it was received (see <see cref="LinkMarshaller"/>).</summary>
internal sealed partial class ClientFrame : IPooledFrame
{
    /// <inheritdoc/>
    public RentedBuffer? Rented { get; set; }
}

/// <summary>A home frame, and the pooled array its data lives in when it was received (see <see cref="LinkMarshaller"/>) or sent.</summary>
internal sealed partial class HomeFrame : IPooledFrame
{
    /// <inheritdoc/>
    public RentedBuffer? Rented { get; set; }

    /// <summary>
    /// At the home: the pooled buffer of the value this frame ends (a read's Completed, a Reserved),
    /// which its data and its chunks' data wrap. The home returns it once gRPC has written the frame,
    /// after its chunks, so no part of the value is still to be copied.
    /// </summary>
    public PooledValueBuffer? Sent { get; set; }
}
