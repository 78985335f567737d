using System.Buffers;
using System.Threading;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// An array rented from a pool to hold the <c>data</c> of one received frame (see
/// <see cref="LinkMarshaller"/>), and the pool it goes back to.
/// </summary>
/// <remarks>
/// Ownership moves with the frame's value: the frame loop, then a <see cref="ValueAssembler"/>,
/// then whoever decodes the value. Whoever holds it last calls <see cref="Return"/>, after which
/// nothing may read the bytes (the array may already hold another frame's data). Returning twice
/// is harmless: the second call finds nothing, so a pooled array can never be handed out twice.
/// </remarks>
internal sealed class RentedBuffer(ArrayPool<byte> pool, byte[] array)
{
    private byte[]? _array = array;

    /// <summary>Gives the array back to its pool; later calls do nothing.</summary>
    internal void Return()
    {
        if (Interlocked.Exchange(ref _array, null) is { } array)
        {
            pool.Return(array);
        }
    }
}
