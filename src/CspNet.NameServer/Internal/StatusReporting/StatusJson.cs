using System;
using System.IO;
using System.Text.Json;
using CspNet.Remote.NameServer;

namespace CspNet.NameServer.Internal.StatusReporting;

/// <summary>The status page's JSON twin (<c>/status.json</c>): the same snapshot for scripts and monitoring.</summary>
/// <remarks>Written field by field with <see cref="Utf8JsonWriter"/>: no reflection, and the shape is this file.</remarks>
internal static class StatusJson
{
    internal static byte[] Render(StatusSnapshot snapshot)
    {
        ArgumentNullException.ThrowIfNull(snapshot);
        using var stream = new MemoryStream();
        using (var json = new Utf8JsonWriter(stream, new JsonWriterOptions { Indented = true }))
        {
            json.WriteStartObject();
            json.WriteString("takenAt", snapshot.TakenAt.UtcDateTime);
            json.WriteNumber("refreshSeconds", snapshot.Refresh.TotalSeconds);
            if (snapshot.Registry is { } registry)
            {
                json.WriteNumber("leaseTtlSeconds", registry.LeaseTtl.TotalSeconds);
                json.WriteNumber("leaseCount", registry.LeaseCount);
                json.WriteNumber("nameCount", registry.NameCount);
                json.WriteNumber("poolCount", registry.PoolCount);
                Names(json, registry);
                Pools(json, registry);
            }

            json.WriteNumber("failureTotal", snapshot.FailureTotal);
            json.WriteStartArray("failures");
            foreach (FailureRecord failure in snapshot.Failures)
            {
                json.WriteStartObject();
                json.WriteString("time", failure.Time.UtcDateTime);
                json.WriteString("kind", failure.Kind.ToString());
                json.WriteString("reason", failure.Reason);
                json.WriteEndObject();
            }

            json.WriteEndArray();
            json.WriteEndObject();
        }

        return stream.ToArray();
    }

    private static void Names(Utf8JsonWriter json, RegistrySnapshot registry)
    {
        json.WriteStartArray("names");
        foreach (StatusName row in registry.Names)
        {
            NameEntry entry = row.Entry;
            json.WriteStartObject();
            json.WriteString("name", entry.Name);
            json.WriteString("kind", entry.Kind.ToString());
            json.WriteString("valueType", entry.ValueType);
            json.WriteNumber("bufferCapacity", entry.BufferCapacity);
            json.WriteString("endpoint", entry.Endpoint?.ToString());
            Lease(json, row.Program, row.LeaseAge, row.ExpiresIn);
            json.WriteEndObject();
        }

        json.WriteEndArray();
    }

    private static void Pools(Utf8JsonWriter json, RegistrySnapshot registry)
    {
        json.WriteStartArray("pools");
        foreach (StatusPool row in registry.Pools)
        {
            WorkerPoolEntry pool = row.Pool;
            json.WriteStartObject();
            json.WriteString("name", pool.Name);
            json.WriteString("uri", pool.Uri.ToString());
            json.WriteNumber("workers", pool.Workers);
            json.WriteNumber("freeWorkers", pool.FreeWorkers);
            json.WriteNumber("busyWorkers", pool.Workers - pool.FreeWorkers);
            Lease(json, row.Program, row.LeaseAge, row.ExpiresIn);
            json.WriteEndObject();
        }

        json.WriteEndArray();
    }

    private static void Lease(Utf8JsonWriter json, string program, TimeSpan age, TimeSpan expiresIn)
    {
        json.WriteString("program", program);
        json.WriteNumber("leaseAgeSeconds", Math.Round(age.TotalSeconds, 3));
        json.WriteNumber("expiresInSeconds", Math.Round(expiresIn.TotalSeconds, 3));
    }
}
