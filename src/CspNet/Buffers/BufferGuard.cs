using System;

namespace CspNet;

/// <summary>Argument checks shared by the fixed-capacity buffers.</summary>
internal static class BufferGuard
{
    internal static void RequirePositiveCapacity(int capacity, string paramName = "capacity")
    {
        if (capacity < 1)
        {
            throw new ArgumentOutOfRangeException(paramName, capacity,
                "A buffer's capacity must be at least 1. For a rendezvous channel, create the channel without a buffer.");
        }
    }
}
