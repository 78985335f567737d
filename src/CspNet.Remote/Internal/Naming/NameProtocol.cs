using System;
using CspNet.Remote.NameServer;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Naming;

/// <summary>Converts between the public NameServer types and the generated protocol messages.</summary>
/// <remarks>Shared by the service and the client so both read the wire the same way.</remarks>
internal static class NameProtocol
{
    internal static Proto.Endpoint ToProto(LinkEndpoint endpoint) => new() { Host = endpoint.Host, Port = endpoint.Port };

    internal static LinkEndpoint FromProto(Proto.Endpoint? endpoint)
    {
        // A missing message field arrives as null; the protocol requires the endpoint.
        return endpoint is null
            ? throw new ArgumentException("The endpoint is missing.", nameof(endpoint))
            : new LinkEndpoint(endpoint.Host, endpoint.Port);
    }

    internal static Proto.NameEntry ToProto(NameEntry entry)
    {
        var message = new Proto.NameEntry
        {
            Name = entry.Name,
            Kind = entry.Kind.ToString(),
            ValueType = entry.ValueType,
            Incarnation = entry.Incarnation,
            BufferCapacity = entry.BufferCapacity,
        };
        if (entry.Endpoint is not null)
        {
            message.Endpoint = ToProto(entry.Endpoint);
        }

        return message;
    }

    internal static NameEntry FromProto(Proto.NameEntry? entry)
    {
        if (entry is null)
        {
            throw new ArgumentException("The entry is missing.", nameof(entry));
        }

        return new NameEntry
        {
            Name = entry.Name,
            Kind = ParseKind(entry.Kind),
            ValueType = entry.ValueType,
            BufferCapacity = entry.BufferCapacity,
            Endpoint = entry.Endpoint is null ? null : new LinkEndpoint(entry.Endpoint.Host, entry.Endpoint.Port),
            Incarnation = entry.Incarnation,
        };
    }

    internal static Proto.PoolEntry ToProto(WorkerPoolEntry pool) => new()
    {
        Name = pool.Name,
        Endpoint = ToProto(pool.Endpoint),
        Tls = pool.Tls,
        Workers = pool.Workers,
        FreeWorkers = pool.FreeWorkers,
        Incarnation = pool.Incarnation,
    };

    internal static WorkerPoolEntry FromProto(Proto.PoolEntry? pool) => pool is null
        ? throw new ArgumentException("The pool is missing.", nameof(pool))
        : new WorkerPoolEntry
        {
            Name = pool.Name,
            Endpoint = FromProto(pool.Endpoint),
            Tls = pool.Tls,
            Workers = pool.Workers,
            FreeWorkers = pool.FreeWorkers,
            Incarnation = pool.Incarnation,
        };

    /// <summary>Parses a kind exactly as the protocol spells it (no numbers, no case folding, unlike <see cref="Enum.TryParse(Type, string?, out object?)"/>).</summary>
    internal static NameKind ParseKind(string kind) => kind switch
    {
        "One2One" => NameKind.One2One,
        "Any2One" => NameKind.Any2One,
        "One2Any" => NameKind.One2Any,
        "Any2Any" => NameKind.Any2Any,
        "Barrier" => NameKind.Barrier,
        "Bucket" => NameKind.Bucket,
        _ => throw new ArgumentException(
            $"Unknown kind '{NameValidation.Shorten(kind)}'; expected One2One, Any2One, One2Any, Any2Any, Barrier or Bucket.", nameof(kind)),
    };
}
