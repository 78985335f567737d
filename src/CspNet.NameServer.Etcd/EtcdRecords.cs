using System.Text.Json.Serialization;

namespace CspNet.NameServer.Etcd;

// The values the registry stores in etcd, as JSON so that an operator can read them with
// `etcdctl get --prefix /cspnet/`. Field names are short but readable; they are a storage format
// shared by every NameServer replica on the same prefix, so they change only compatibly.

/// <summary>A program's lease: key <c>{prefix}leases/{incarnation}</c>, attached to the etcd lease it names.</summary>
internal sealed record LeaseRecord(
    [property: JsonPropertyName("etcdLease")] long EtcdLease,
    [property: JsonPropertyName("host")] string Host,
    [property: JsonPropertyName("port")] int Port,
    [property: JsonPropertyName("program")] string Program,
    [property: JsonPropertyName("openedAt")] long OpenedAtUnixMs);

/// <summary>A name: key <c>{prefix}names/{name}</c>, attached to its program's etcd lease.</summary>
internal sealed record NameRecord(
    [property: JsonPropertyName("kind")] string Kind,
    [property: JsonPropertyName("valueType")] string ValueType,
    [property: JsonPropertyName("capacity")] int BufferCapacity,
    [property: JsonPropertyName("host")] string Host,
    [property: JsonPropertyName("port")] int Port,
    [property: JsonPropertyName("incarnation")] string Incarnation,
    [property: JsonPropertyName("program")] string Program);

/// <summary>A worker pool: key <c>{prefix}pools/{incarnation}</c>, attached to its program's etcd lease.</summary>
internal sealed record PoolRecord(
    [property: JsonPropertyName("name")] string Name,
    [property: JsonPropertyName("host")] string Host,
    [property: JsonPropertyName("port")] int Port,
    [property: JsonPropertyName("tls")] bool Tls,
    [property: JsonPropertyName("workers")] int Workers,
    [property: JsonPropertyName("free")] int FreeWorkers,
    [property: JsonPropertyName("incarnation")] string Incarnation,
    [property: JsonPropertyName("program")] string Program);

[JsonSerializable(typeof(LeaseRecord))]
[JsonSerializable(typeof(NameRecord))]
[JsonSerializable(typeof(PoolRecord))]
internal sealed partial class EtcdRecordsJson : JsonSerializerContext;
