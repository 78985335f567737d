using System;

namespace CspNet.Remote.Internal;

/// <summary>The errors getters give for names that are invalid or used inconsistently.</summary>
internal static class NameRules
{
    /// <summary>Checked at the getter with the NameServer's own rules, so a bad name fails here, not there.</summary>
    internal static void Validate(string name) => NameValidation.Name(name);

    internal static InvalidOperationException Mismatch(Home home, ConstructKind kind, Type? valueType) =>
        new($"'{home.Name}' is a {home.Kind.WireName()}" + (home.ValueType.Length > 0 ? $" of {home.ValueType}" : string.Empty) +
            $", not a {kind.WireName()}" + (valueType is null ? string.Empty : $" of {valueType.FullName}") +
            ". Ask for it with the kind and type it was created with.");
}

/// <summary>A name's entry as the getters use it.</summary>
internal sealed record NameRecord(string Name, string Kind, string ValueType, string Host, int Port, int BufferCapacity);
