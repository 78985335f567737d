using System;

namespace CspNet.Remote.Internal;

/// <summary>What makes a valid name, and the errors getters give for names used inconsistently.</summary>
internal static class NameRules
{
    internal const int MaxLength = 256;

    internal static void Validate(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (name.Length > MaxLength)
        {
            throw new ArgumentException($"A name has at most {MaxLength} characters; '{name[..32]}...' has {name.Length}.", nameof(name));
        }

        foreach (char c in name)
        {
            if (char.IsControl(c))
            {
                throw new ArgumentException($"A name may not contain control characters (found U+{(int)c:X4} in '{name}').", nameof(name));
            }
        }
    }

    internal static InvalidOperationException Mismatch(Home home, ConstructKind kind, Type? valueType) =>
        new($"'{home.Name}' is a {home.Kind.WireName()}" + (home.ValueType.Length > 0 ? $" of {home.ValueType}" : string.Empty) +
            $", not a {kind.WireName()}" + (valueType is null ? string.Empty : $" of {valueType.FullName}") +
            ". Ask for it with the kind and type it was created with.");
}

/// <summary>A name's entry as the getters use it.</summary>
internal sealed record NameRecord(string Name, string Kind, string ValueType, string Host, int Port, int BufferCapacity);
