// The CspNet NameServer as a program (the .NET tool cspnet-nameserver): console, systemd unit or
// Windows service. Configuration (later wins): appsettings.json next to the program, environment
// variables prefixed CSPNET_ (CSPNET_PORT, CSPNET_NameServer__LeaseTtl), then the command line
// (--port 9090, --address 0.0.0.0, --NameServer:LeaseTtl 00:00:05); secrets never from the command
// line. The table is in memory unless --registry etcd (Registry, CSPNET_Registry) puts it in etcd
// (section Etcd, --etcd-endpoints), where several NameServers can share it. See docs/NAMESERVER.md.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using CspNet.NameServer;
using CspNet.NameServer.Etcd;
using CspNet.Services;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

const string Help = """
    cspnet-nameserver: the CspNet NameServer. Programs register the names of their channels, barriers
    and buckets here and resolve other programs' names; worker pools register here too.

    Usage: cspnet-nameserver [options]

    Options:
      --port PORT               the gRPC port (HTTP/2); 0 picks a free one (default 9090)
      --address ADDRESS         where to listen: 127.0.0.1 (default), localhost, 0.0.0.0, ::, or *;
                                any address but loopback needs the cluster key and a certificate
      --tls-certificate PATH    serve TLS with this certificate (PEM), issued for the address programs dial
      --tls-key PATH            the certificate's private key (PEM), read from the file
      --tls-authority PATH      require programs to present a certificate from this authority (PEM)
      --status-port PORT        serve the status page (HTTP/1.1) on this port; off unless given
      --registry memory|etcd    where the table lives: this process's memory (default) or etcd
      --etcd-endpoints URLS     etcd's endpoints, comma-separated (with --registry etcd)
      --cluster-key-file PATH   read the cluster key, which every program must then present, from PATH
      --Section:Key VALUE       any configuration key, e.g. --NameServer:LeaseTtl 00:00:05
      -h, --help                show this help

    Every option is also a configuration key: appsettings.json beside the program, or an environment
    variable CSPNET_<key> with __ for : (CSPNET_PORT=9090, CSPNET_NameServer__LeaseTtl=00:00:05).
    Secrets are never read from the command line, where other users of the machine can see them: give
    the cluster key in a file (--cluster-key-file) or the environment (CSPNET_NameServer__ClusterKey),
    and the etcd password in a file (Etcd:PasswordFile) or CSPNET_ETCD_PASSWORD.

    Documentation: docs/NAMESERVER.md in the CspNet repository.

    """;

if (ServiceProgram.PrintHelpIfAsked(args, Help))
{
    return 0;
}

var switches = new Dictionary<string, string>
{
    ["--port"] = "Port",
    ["--address"] = "Address",
    ["--status-port"] = "StatusPage:Port",
    ["--registry"] = "Registry",
    ["--etcd-endpoints"] = "Etcd:Endpoints",
    ["--cluster-key-file"] = "NameServer:ClusterKeyFile",
    ["--tls-certificate"] = "Tls:CertificateFile",
    ["--tls-key"] = "Tls:KeyFile",
    ["--tls-authority"] = "Tls:AuthorityFile",
};

WebApplication app;
try
{
    WebApplicationBuilder builder = ServiceProgram.CreateBuilder(args, switches, "CspNet NameServer");
    ServiceProgram.ReadSecrets(builder, args, switches, [("NameServer:ClusterKey", "NameServer:ClusterKeyFile", "--cluster-key-file")]);

    (IPAddress address, int port) = ListenEndpoint(builder.Configuration);

    // The status page (docs/NAMESERVER.md#status-page) is opt-in: StatusPage:Port (--status-port)
    // opens a second, HTTP/1.1 endpoint for browsers, on StatusPage:Address (default 127.0.0.1).
    (IPAddress Address, int Port)? status = StatusEndpoint(builder.Configuration);

    // TLS (docs/SECURITY.md): the certificate and key are PEM files (the key file is read, never
    // passed on a command line); with an authority, programs must present a certificate it issued.
    (X509Certificate2 Certificate, X509Certificate2? Authority)? tls = TlsSettings(builder.Configuration);
    builder.WebHost.ConfigureKestrel(kestrel =>
    {
        // Bounded like every resource a stranger could make the NameServer hold (NameServer:MaxConnections).
        kestrel.Limits.MaxConcurrentConnections = builder.Configuration.GetValue("NameServer:MaxConnections", new NameServerOptions().MaxConnections);
        kestrel.Listen(address, port, listen =>
        {
            listen.Protocols = HttpProtocols.Http2;
            UseTls(listen, tls);
        });
        if (status is { } page)
        {
            kestrel.Listen(page.Address, page.Port, listen =>
            {
                listen.Protocols = HttpProtocols.Http1;
                UseTls(listen, tls is { } t ? (t.Certificate, null) : null);
            });
        }
    });

    builder.Services.AddCspNameServer();
    builder.Services.Configure<NameServerOptions>(builder.Configuration.GetSection("NameServer"));
    bool etcd = UsesEtcd(builder.Configuration);
    if (etcd)
    {
        builder.Services.AddCspEtcdNameRegistry();
        builder.Services.Configure<EtcdNameRegistryOptions>(builder.Configuration.GetSection("Etcd"));
    }

    if (builder.Configuration["StatusPage:Refresh"] is { } refresh)
    {
        // Only Refresh is read by the page itself; Address and Port are the endpoint's, above.
        builder.Services.Configure<NameServerStatusPageOptions>(o => o.Refresh = TimeSpan.Parse(refresh, CultureInfo.InvariantCulture));
    }
    builder.Services.AddGrpcHealthChecks().AddCheck("nameserver", static () => HealthCheckResult.Healthy());

    app = builder.Build();
    app.MapCspNameServer();
    app.MapGrpcHealthChecksService();
    if (status is not null)
    {
        // Browsers reach it on the page's own endpoint only (the gRPC one speaks HTTP/2 alone);
        // either way the page's access rules apply (loopback only, or the cluster key).
        app.MapCspNameServerStatus();
    }

    // Read the options now, so that a setting out of range is reported like the others.
    _ = app.Services.GetRequiredService<IOptions<NameServerOptions>>().Value;
    if (etcd)
    {
        // Likewise the etcd settings and the password, before the NameServer says it listens.
        _ = app.Services.GetRequiredService<IOptions<EtcdNameRegistryOptions>>().Value;
        _ = app.Services.GetRequiredService<INameRegistry>();
    }

    // Exposed beyond this machine, the NameServer must not serve strangers: it needs a key the
    // cluster shares (without one, it uses its user's own key, which no other machine has).
    bool sharedKey = !string.IsNullOrEmpty(app.Configuration["NameServer:ClusterKey"]);
    if (!IPAddress.IsLoopback(address) && !sharedKey)
    {
        throw new ArgumentException(
            $"Listening on {address} exposes the NameServer: set NameServer:ClusterKey (a file named by --cluster-key-file, or the environment variable CSPNET_NameServer__ClusterKey) to the secret every program is given, or listen on 127.0.0.1.");
    }

    if (status is { } exposed && !IPAddress.IsLoopback(exposed.Address) && !sharedKey)
    {
        throw new ArgumentException(
            $"Serving the status page on {exposed.Address} exposes every name: set NameServer:ClusterKey (the page then asks for it), or serve it on 127.0.0.1.");
    }

    // The cluster key travels with every call: beyond this machine, only inside TLS.
    if ((!IPAddress.IsLoopback(address) || status is { } open && !IPAddress.IsLoopback(open.Address)) && tls is null)
    {
        throw new ArgumentException(
            $"Listening beyond this machine would carry the cluster key and every name in clear: give the NameServer a certificate (--tls-certificate FILE --tls-key FILE, PEM, issued for the address programs dial; --tls-authority FILE to require programs' certificates), or listen on 127.0.0.1.");
    }
}
catch (Exception e) when (e is FormatException or ArgumentException or OptionsValidationException or IOException or UnauthorizedAccessException or System.Security.Cryptography.CryptographicException)
{
    // A configuration mistake: say which, without a stack trace, and exit with a usage error.
    return ServiceProgram.ConfigurationError("cspnet-nameserver", e);
}

return await ServiceProgram.RunAsync(app, "cspnet-nameserver").ConfigureAwait(false);

static (X509Certificate2 Certificate, X509Certificate2? Authority)? TlsSettings(IConfiguration configuration)
{
    IConfigurationSection section = configuration.GetSection("Tls");
    if (section["CertificateFile"] is not { } certificateFile)
    {
        return section["KeyFile"] is null && section["AuthorityFile"] is null
            ? null
            : throw new ArgumentException("Tls:KeyFile and Tls:AuthorityFile need Tls:CertificateFile (--tls-certificate FILE): the NameServer's own certificate.");
    }

    X509Certificate2 certificate = X509Certificate2.CreateFromPemFile(certificateFile, section["KeyFile"]);
    X509Certificate2? authority = section["AuthorityFile"] is { } authorityFile ? X509CertificateLoader.LoadCertificateFromFile(authorityFile) : null;
    return (certificate, authority);
}

static void UseTls(Microsoft.AspNetCore.Server.Kestrel.Core.ListenOptions listen, (X509Certificate2 Certificate, X509Certificate2? Authority)? tls)
{
    if (tls is not { } settings)
    {
        return;
    }

    listen.UseHttps(https =>
    {
        https.ServerCertificate = settings.Certificate;
        if (settings.Authority is { } authority)
        {
            // Mutual TLS: a program's certificate must come from the cluster's authority, for client use.
            https.ClientCertificateMode = Microsoft.AspNetCore.Server.Kestrel.Https.ClientCertificateMode.RequireCertificate;
            https.ClientCertificateValidation = (certificate, _, _) => IsClusterClient(certificate, authority);
        }
    });
}

static bool IsClusterClient(X509Certificate2 certificate, X509Certificate2 authority)
{
    using var chain = new X509Chain();
    chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
    chain.ChainPolicy.CustomTrustStore.Add(authority);
    chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
    bool clientUse = certificate.Extensions.OfType<X509EnhancedKeyUsageExtension>().FirstOrDefault() is not { } usages
        || usages.EnhancedKeyUsages.Cast<System.Security.Cryptography.Oid>().Any(oid => oid.Value == "1.3.6.1.5.5.7.3.2");
    return clientUse && chain.Build(certificate);
}

static bool UsesEtcd(IConfiguration configuration)
{
    if (configuration["Etcd:Password"] is not null)
    {
        // A password in configuration ends up on command lines and in files many can read.
        throw new ArgumentException("Etcd:Password is not read: put the etcd password in a file named by Etcd:PasswordFile, or in the environment variable CSPNET_ETCD_PASSWORD.");
    }

    return (configuration["Registry"] ?? "memory").ToUpperInvariant() switch
    {
        "MEMORY" or "IN-MEMORY" => false,
        "ETCD" => true,
        _ => throw new FormatException($"Registry '{configuration["Registry"]}' is unknown: use memory (the default: names in this process) or etcd (names in etcd, with --etcd-endpoints)."),
    };
}

static (IPAddress Address, int Port)? StatusEndpoint(IConfiguration configuration)
{
    IConfigurationSection section = configuration.GetSection("StatusPage");
    return section["Port"] is null || !section.GetValue("Enabled", true)
        ? null
        : (ParseAddress(section["Address"] ?? "127.0.0.1"), ParsePort(section["Port"]!));
}

static (IPAddress Address, int Port) ListenEndpoint(IConfiguration configuration) =>
    (ParseAddress(configuration["Address"] ?? "127.0.0.1"), ParsePort(configuration["Port"] ?? "9090"));

static IPAddress ParseAddress(string text)
{
    IPAddress address = text switch
    {
        "localhost" => IPAddress.Loopback,
        "*" or "any" => IPAddress.IPv6Any,
        _ => IPAddress.TryParse(text, out IPAddress? parsed)
            ? parsed
            : throw new FormatException($"Address '{text}' is not an IP address (use 127.0.0.1, 0.0.0.0, ::, * or localhost)."),
    };
    return address;
}

static int ParsePort(string text) =>
    int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int port) && port <= 65535
        ? port
        : throw new FormatException($"Port '{text}' is not a port number (0..65535; 0 picks a free port).");
