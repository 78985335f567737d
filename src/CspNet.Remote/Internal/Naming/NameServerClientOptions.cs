using System;
using System.Collections.Generic;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Naming;

/// <summary>Timeouts and plumbing of a <see cref="NameServerClient"/>.</summary>
internal sealed class NameServerClientOptions
{
    /// <summary>How long the NameServer may stay unreachable, continuously, before a call gives up. Default 5 seconds.</summary>
    public TimeSpan NameServerTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>The deadline of one call that does not wait (everything but Resolve). Default 5 seconds.</summary>
    public TimeSpan CallTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>How long one Resolve call asks the server to wait; ResolveAsync repeats such calls until the name exists. Default 10 seconds.</summary>
    public TimeSpan ResolveWait { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>The first pause after a failed call; doubles up to <see cref="MaxBackoff"/>. Default 50 ms.</summary>
    public TimeSpan InitialBackoff { get; set; } = TimeSpan.FromMilliseconds(50);

    /// <summary>The longest pause between retries. Default 1 second.</summary>
    public TimeSpan MaxBackoff { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The clock for renewals and back-off.</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>Where the client and its gRPC channel log; nothing when <see langword="null"/>.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>The HTTP handler for the gRPC channel; a <see cref="SocketsHttpHandler"/> when <see langword="null"/>.</summary>
    public HttpMessageHandler? HttpHandler { get; set; }

    /// <summary>Further addresses of the same NameServer (replicas on one registry), tried in order when the first is unreachable.</summary>
    public IReadOnlyList<Uri> Replicas { get; set; } = [];

    /// <summary>The cluster's authority: a NameServer at an https:// address must present a certificate it issued (null: the machine's roots).</summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? TrustedCertificate { get; set; }

    /// <summary>The certificate this program presents to a NameServer that asks for one (mutual TLS).</summary>
    public System.Security.Cryptography.X509Certificates.X509Certificate2? Certificate { get; set; }

    /// <summary>The cluster key sent with every call, if the NameServer requires one.</summary>
    public string? ClusterKey { get; set; }

    /// <summary>
    /// Awaited each time a lease has opened, before anything is registered under it: tests stop a
    /// NameServer at exactly that moment. Nothing when <see langword="null"/>.
    /// </summary>
    public Func<CancellationToken, Task>? LeaseOpened { get; set; }
}
