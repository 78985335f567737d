using System;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Internal.Naming;

/// <summary>The protocol's rules for names, entries, endpoints and labels (nameserver.proto).</summary>
/// <remarks>
/// Every failure is an <see cref="ArgumentException"/>, which the service answers with
/// INVALID_ARGUMENT. Messages quote the offending input only shortened and without control
/// characters: requests are untrusted, and messages end up in logs and in other programs.
/// </remarks>
internal static class NameValidation
{
    internal const int MaxNameLength = 256;
    internal const int MaxValueTypeLength = 1024;
    internal const int MaxHostLength = 253;
    internal const int MaxProgramLabelLength = 256;
    internal const int MaxLeaseIdLength = 64;

    private static readonly System.Buffers.SearchValues<char> LowerHex = System.Buffers.SearchValues.Create("0123456789abcdef");

    internal static void Name(string? name, string paramName = "name")
    {
        Text(name, paramName, "name", MaxNameLength, allowEmpty: false);
    }

    internal static void LeaseId(string? leaseId, string paramName = "leaseId")
    {
        Text(leaseId, paramName, "lease id", MaxLeaseIdLength, allowEmpty: false);
    }

    /// <summary>An incarnation as <see cref="CspNet.Remote.NameServer.Incarnations"/> makes it: 32 lower-case hex digits.</summary>
    internal static void Incarnation(string? incarnation, string paramName = "incarnation")
    {
        ArgumentNullException.ThrowIfNull(incarnation, paramName);
        if (incarnation.Length != 32 || incarnation.AsSpan().ContainsAnyExcept(LowerHex))
        {
            throw new ArgumentException($"The incarnation '{Shorten(incarnation)}' is not 32 lower-case hex digits, as a resolved NameEntry's incarnation is.", paramName);
        }
    }

    internal static void ProgramLabel(string? label, string paramName = "programLabel")
    {
        Text(label, paramName, "program label", MaxProgramLabelLength, allowEmpty: true);
    }

    internal static void Endpoint(LinkEndpoint? endpoint, string paramName = "endpoint")
    {
        ArgumentNullException.ThrowIfNull(endpoint, paramName);
        Text(endpoint.Host, paramName, "endpoint host", MaxHostLength, allowEmpty: false);
        if (Uri.CheckHostName(endpoint.Host) == UriHostNameType.Unknown)
        {
            throw new ArgumentException($"The endpoint host '{Shorten(endpoint.Host)}' is neither a host name nor an IP literal.", paramName);
        }

        Port(endpoint.Port, paramName);
    }

    internal static void Port(int port, string paramName = "port")
    {
        if (port is < 1 or > 65535)
        {
            throw new ArgumentOutOfRangeException(paramName, port, "The port must be between 1 and 65535.");
        }
    }

    internal static void Entry(NameEntry? entry, string paramName = "entry")
    {
        ArgumentNullException.ThrowIfNull(entry, paramName);
        Name(entry.Name, paramName);
        if (!Enum.IsDefined(entry.Kind))
        {
            throw new ArgumentException($"Unknown kind {(int)entry.Kind}.", paramName);
        }

        if (IsChannel(entry.Kind))
        {
            Text(entry.ValueType, paramName, "value type", MaxValueTypeLength, allowEmpty: false);
            if (entry.BufferCapacity < -1)
            {
                throw new ArgumentOutOfRangeException(paramName, entry.BufferCapacity, "A channel's buffer capacity is 0 (unbuffered), positive (buffered) or -1 (unbounded).");
            }
        }
        else if (entry.ValueType.Length != 0 || entry.BufferCapacity != 0)
        {
            throw new ArgumentException($"A {entry.Kind} has no value type and no buffer capacity.", paramName);
        }
    }

    internal const int MaxWorkers = 100_000;

    internal static void Pool(WorkerPoolEntry? pool, string paramName = "pool")
    {
        ArgumentNullException.ThrowIfNull(pool, paramName);
        Text(pool.Name, paramName, "pool name", MaxNameLength, allowEmpty: false);
        Endpoint(pool.Endpoint, paramName);
        if (pool.Workers is < 1 or > MaxWorkers)
        {
            throw new ArgumentOutOfRangeException(paramName, pool.Workers, $"A pool has 1..{MaxWorkers} workers.");
        }

        if (pool.FreeWorkers < 0 || pool.FreeWorkers > pool.Workers)
        {
            throw new ArgumentOutOfRangeException(paramName, pool.FreeWorkers, $"The free count must be 0..{pool.Workers} (the pool's workers).");
        }
    }

    internal static bool IsChannel(NameKind kind) => kind is NameKind.One2One or NameKind.Any2One or NameKind.One2Any or NameKind.Any2Any;

    /// <summary>Makes untrusted text safe to quote in a message: at most 64 characters, control characters replaced.</summary>
    internal static string Shorten(string? text)
    {
        if (text is null)
        {
            return "(null)";
        }

        const int Max = 64;
        ReadOnlySpan<char> head = text.AsSpan(0, Math.Min(text.Length, Max));
        return string.Create(head.Length + (text.Length > Max ? 1 : 0), text, static (span, source) =>
        {
            for (int i = 0; i < span.Length; i++)
            {
                span[i] = i < source.Length && i < Max ? (char.IsControl(source[i]) ? '?' : source[i]) : '…';
            }
        });
    }

    private static void Text(string? value, string paramName, string what, int maxLength, bool allowEmpty)
    {
        ArgumentNullException.ThrowIfNull(value, paramName);
        if (value.Length == 0 && !allowEmpty)
        {
            throw new ArgumentException($"The {what} is empty.", paramName);
        }

        if (value.Length > maxLength)
        {
            throw new ArgumentException($"The {what} has {value.Length} characters; at most {maxLength} are allowed.", paramName);
        }

        foreach (char c in value)
        {
            if (char.IsControl(c))
            {
                throw new ArgumentException($"The {what} '{Shorten(value)}' contains a control character.", paramName);
            }
        }
    }
}
