using System;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Internal.Naming;

/// <summary>The rules that depend on a named construct's kind.</summary>
internal static class NameKinds
{
    internal static string WireName(this NameKind kind) => kind switch
    {
        NameKind.One2One => "One2One",
        NameKind.Any2One => "Any2One",
        NameKind.One2Any => "One2Any",
        NameKind.Any2Any => "Any2Any",
        NameKind.Barrier => "Barrier",
        _ => "Bucket",
    };

    internal static bool HasSingleReader(this NameKind kind) => kind is NameKind.One2One or NameKind.Any2One;

    internal static bool HasSingleWriter(this NameKind kind) => kind is NameKind.One2One or NameKind.One2Any;

    /// <summary>
    /// Whether the end that creates (and hosts) the construct is this one. As in CSP.NET the
    /// channel lives at its One end: the reader of One2One and Any2One, the writer of One2Any.
    /// An Any2Any (which CSP.NET lacked) and a bucket live wherever they are first asked for.
    /// </summary>
    internal static bool CreatedBy(this NameKind kind, bool reader) => kind switch
    {
        NameKind.One2One or NameKind.Any2One => reader,
        NameKind.One2Any => !reader,
        _ => true,
    };

    /// <summary>Whether a second creator joins the existing construct instead of failing.</summary>
    internal static bool JoinsExisting(this NameKind kind) => kind is NameKind.Any2Any or NameKind.Bucket;

    internal static CspChannel<T> CreateChannel<T>(this NameKind kind, IBuffer<T>? buffer) => kind switch
    {
        NameKind.One2One => buffer is null ? new One2OneChannel<T>() : new One2OneChannel<T>(buffer),
        NameKind.Any2One => buffer is null ? new Any2OneChannel<T>() : new Any2OneChannel<T>(buffer),
        NameKind.One2Any => buffer is null ? new One2AnyChannel<T>() : new One2AnyChannel<T>(buffer),
        NameKind.Any2Any => buffer is null ? new Any2AnyChannel<T>() : new Any2AnyChannel<T>(buffer),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "Not a channel kind."),
    };
}
