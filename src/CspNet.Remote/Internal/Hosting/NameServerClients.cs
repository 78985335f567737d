using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>How a node uses its <see cref="NameServerClient"/>: the getters' view of names.</summary>
internal static class NameServerClients
{
    internal static NameServerClient Create(NodeRuntime runtime, string host, int port) =>
        new(
            runtime.Options.NameServer,
            new LinkEndpoint(host, port),
            runtime.ProgramLabel,
            new NameServerClientOptions
            {
                NameServerTimeout = runtime.Options.NameServerTimeout,
                LoggerFactory = runtime.Options.LoggerFactory,
                ClusterKey = runtime.Options.ClusterKey,
                Replicas = [.. runtime.Options.NameServerReplicas],
                TrustedCertificate = runtime.Options.TrustedCertificate,
                Certificate = runtime.Options.Certificate,
            });

    /// <summary>Registers a name hosted here; Created is false when another program already hosts it (joining kinds).</summary>
    internal static async Task<(NameRecord Record, bool Created)> RegisterRecordAsync(this NameServerClient client, NameRecord record, bool returnExisting, CancellationToken cancellationToken)
    {
        var entry = new NameEntry
        {
            Name = record.Name,
            Kind = Enum.Parse<NameKind>(record.Kind),
            ValueType = record.ValueType,
            BufferCapacity = record.BufferCapacity,
            Endpoint = new LinkEndpoint(record.Host, record.Port),
        };
        try
        {
            NameEntry registered = await client.RegisterAsync(entry, returnExisting, cancellationToken).ConfigureAwait(false);
            return (ToRecord(registered), registered.Incarnation == client.PublicIncarnation);
        }
        catch (NameAlreadyRegisteredException e)
        {
            throw new NameAlreadyRegisteredException(
                $"{record.Kind} '{record.Name}' cannot be created by this program: {e.Message} Choose another name, or get the other end of the existing one.", e);
        }
    }

    /// <summary>Waits until the name is registered (anywhere) and returns where it lives.</summary>
    internal static async Task<NameRecord> ResolveRecordAsync(this NameServerClient client, string name, CancellationToken cancellationToken) =>
        ToRecord(await client.ResolveAsync(name, cancellationToken).ConfigureAwait(false));

    private static NameRecord ToRecord(NameEntry entry) =>
        new(entry.Name, entry.Kind.ToString(), entry.ValueType, entry.Endpoint?.Host ?? string.Empty, entry.Endpoint?.Port ?? 0, entry.BufferCapacity);
}
