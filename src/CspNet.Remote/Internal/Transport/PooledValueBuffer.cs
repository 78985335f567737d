using System;
using System.Buffers;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// The bytes of one value on its way out, in an array rented from the shared pool. A megabyte
/// value would otherwise be a fresh large-object-heap array per write, and those are only
/// reclaimed by full collections.
/// </summary>
/// <remarks>
/// Return it only when nothing can still read it: after the home answered the operation (so it
/// received every frame, which gRPC had serialized before sending). After a lost link a frame may
/// still be in the middle of serialization, so then the array is left to the garbage collector.
/// </remarks>
internal sealed class PooledValueBuffer : IBufferWriter<byte>
{
    private byte[] _array;
    private int _written;

    internal PooledValueBuffer(int initialSize = 256) => _array = ArrayPool<byte>.Shared.Rent(initialSize);

    internal ReadOnlyMemory<byte> WrittenMemory => _array.AsMemory(0, _written);

    internal int WrittenCount => _written;

    public void Advance(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        if (_written + count > _array.Length)
        {
            throw new InvalidOperationException("Advanced past the end of the buffer.");
        }

        _written += count;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _array.AsMemory(_written);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _array.AsSpan(_written);
    }

    internal void Return()
    {
        byte[] array = _array;
        _array = [];
        _written = 0;
        ArrayPool<byte>.Shared.Return(array);
    }

    private void Ensure(int sizeHint)
    {
        int needed = Math.Max(sizeHint, 1);
        if (_array.Length - _written >= needed)
        {
            return;
        }

        int size = (int)Math.Min(Array.MaxLength, Math.Max((long)_written + needed, (long)_array.Length * 2));
        byte[] larger = ArrayPool<byte>.Shared.Rent(size);
        _array.AsSpan(0, _written).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(_array);
        _array = larger;
    }
}
