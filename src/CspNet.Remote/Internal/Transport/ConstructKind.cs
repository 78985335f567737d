using System;

namespace CspNet.Remote.Internal.Transport;

/// <summary>The kinds of named constructs and the rules that depend on the kind.</summary>
internal enum ConstructKind
{
    One2One,
    Any2One,
    One2Any,
    Any2Any,
    Barrier,
    Bucket,
}

internal static class ConstructKinds
{
    internal static string WireName(this ConstructKind kind) => kind switch
    {
        ConstructKind.One2One => "One2One",
        ConstructKind.Any2One => "Any2One",
        ConstructKind.One2Any => "One2Any",
        ConstructKind.Any2Any => "Any2Any",
        ConstructKind.Barrier => "Barrier",
        _ => "Bucket",
    };

    internal static bool HasSingleReader(this ConstructKind kind) => kind is ConstructKind.One2One or ConstructKind.Any2One;

    internal static bool HasSingleWriter(this ConstructKind kind) => kind is ConstructKind.One2One or ConstructKind.One2Any;

    /// <summary>
    /// Whether the end that creates (and hosts) the construct is this one. As in CSP.NET the
    /// channel lives at its One end: the reader of One2One and Any2One, the writer of One2Any.
    /// An Any2Any (which CSP.NET lacked) and a bucket live wherever they are first asked for.
    /// </summary>
    internal static bool CreatedBy(this ConstructKind kind, bool reader) => kind switch
    {
        ConstructKind.One2One or ConstructKind.Any2One => reader,
        ConstructKind.One2Any => !reader,
        _ => true,
    };

    /// <summary>Whether a second creator joins the existing construct instead of failing.</summary>
    internal static bool JoinsExisting(this ConstructKind kind) => kind is ConstructKind.Any2Any or ConstructKind.Bucket;

    internal static CspChannel<T> CreateChannel<T>(this ConstructKind kind, IBuffer<T>? buffer) => kind switch
    {
        ConstructKind.One2One => buffer is null ? new One2OneChannel<T>() : new One2OneChannel<T>(buffer),
        ConstructKind.Any2One => buffer is null ? new Any2OneChannel<T>() : new Any2OneChannel<T>(buffer),
        ConstructKind.One2Any => buffer is null ? new One2AnyChannel<T>() : new One2AnyChannel<T>(buffer),
        ConstructKind.Any2Any => buffer is null ? new Any2AnyChannel<T>() : new Any2AnyChannel<T>(buffer),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "Not a channel kind."),
    };
}
