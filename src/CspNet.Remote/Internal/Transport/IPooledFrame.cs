namespace CspNet.Remote.Internal.Transport;

/// <summary>A received Link frame whose data may live in a pooled array (see <see cref="LinkMarshaller"/>).</summary>
internal interface IPooledFrame
{
    /// <summary>The array the frame's <c>data</c> wraps, when <see cref="LinkMarshaller"/> parsed it into a pooled one.</summary>
    RentedBuffer? Rented { get; set; }
}

/// <summary>Moving a frame's pooled array to whoever reads the data last.</summary>
internal static class PooledFrameExtensions
{
    /// <summary>Takes ownership of the frame's pooled array, if any: the caller returns it, the frame no longer holds it.</summary>
    internal static RentedBuffer? TakeRented(this IPooledFrame frame)
    {
        RentedBuffer? rented = frame.Rented;
        frame.Rented = null;
        return rented;
    }
}
