using System;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Internal.Homes;

/// <summary>The errors getters give for names that are invalid or used inconsistently.</summary>
internal static class NameRules
{
    /// <summary>Checked at the getter with the NameServer's own rules, so a bad name fails here, not there.</summary>
    internal static void Validate(string name) => NameValidation.Name(name);

    internal static InvalidOperationException Mismatch(Home home, NameKind kind, Type? valueType) =>
        Mismatch(home.Name, home.Kind.WireName(), home.ValueType, kind.WireName(), valueType?.FullName ?? string.Empty);

    /// <summary>A name asked for as another kind or value type than it was created with.</summary>
    internal static InvalidOperationException Mismatch(string name, string kind, string valueType, string askedKind, string askedValueType) =>
        new($"'{name}' is {WithArticle(kind)}" + (valueType.Length > 0 ? $" of {valueType}" : string.Empty) +
            $", not {WithArticle(askedKind)}" + (askedValueType.Length > 0 ? $" of {askedValueType}" : string.Empty) +
            ". Ask for it with the kind and type it was created with.");

    /// <summary>"an Any2One", "a One2One": a construct kind with the article a reader expects.</summary>
    internal static string WithArticle(string kind) => (kind.StartsWith('A') ? "an " : "a ") + kind;
}

/// <summary>A name's entry as the getters use it.</summary>
internal sealed record NameRecord(string Name, string Kind, string ValueType, string Host, int Port, int BufferCapacity);
