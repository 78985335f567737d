using CspNet.Internal;

namespace CspNet;

/// <summary>A channel between any number of writing processes and any number of reading processes.</summary>
/// <typeparam name="T">The type of the values carried.</typeparam>
/// <remarks><inheritdoc cref="CspChannel{T}" path="/remarks"/></remarks>
public sealed class Any2AnyChannel<T> : CspChannel<T>
{
    /// <summary>Creates an unbuffered (rendezvous) channel.</summary>
    public Any2AnyChannel()
        : base(null, ChannelShape.Any2Any)
    {
    }

    /// <summary>Creates a channel that stores values in <paramref name="buffer"/>.</summary>
    /// <param name="buffer">The buffer; it belongs to this channel from now on and must not be shared.</param>
    public Any2AnyChannel(IBuffer<T> buffer)
        : base(RequireBuffer(buffer), ChannelShape.Any2Any)
    {
    }
}
