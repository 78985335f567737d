using System;

namespace CspNet.Remote.NameServer;

/// <summary>What a name stands for and which program hosts it.</summary>
/// <remarks>
/// When registering, only <see cref="Name"/>, <see cref="Kind"/>, <see cref="ValueType"/> and
/// <see cref="BufferCapacity"/> count: the registry takes <see cref="Endpoint"/> and
/// <see cref="Incarnation"/> from the lease, so a program cannot register names for another.
/// </remarks>
public sealed record NameEntry
{
    /// <summary>The name: 1..256 characters, no control characters.</summary>
    public required string Name { get; init; }

    /// <summary>What the name stands for.</summary>
    public required NameKind Kind { get; init; }

    /// <summary>Channels: the wire name of the value type; barriers and buckets: empty.</summary>
    public string ValueType { get; init; } = "";

    /// <summary>Channels: 0 unbuffered, greater than 0 buffered, -1 unbounded; barriers and buckets: 0.</summary>
    public int BufferCapacity { get; init; }

    /// <summary>The hosting program's Link endpoint; <see langword="null"/> before registration.</summary>
    public LinkEndpoint? Endpoint { get; init; }

    /// <summary>The hosting program's lease id: changes when the program restarts; empty before registration.</summary>
    public string Incarnation { get; init; } = "";

    /// <summary>Whether <paramref name="other"/> describes the same object: same name, kind, value type and capacity.</summary>
    /// <param name="other">The entry to compare with.</param>
    /// <returns><see langword="true"/> when the definitions match, wherever they are hosted.</returns>
    public bool HasSameDefinition(NameEntry other)
    {
        ArgumentNullException.ThrowIfNull(other);
        return string.Equals(Name, other.Name, StringComparison.Ordinal) && Kind == other.Kind
            && string.Equals(ValueType, other.ValueType, StringComparison.Ordinal) && BufferCapacity == other.BufferCapacity;
    }
}
