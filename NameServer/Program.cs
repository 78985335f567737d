// The CspNet NameServer as a program: console, systemd unit or Windows service.
// Configuration (later wins): appsettings.json next to the program, environment variables
// prefixed CSPNET_ (CSPNET_PORT, CSPNET_NameServer__LeaseTtl), then the command line
// (--port 9090, --address 0.0.0.0, --NameServer:LeaseTtl 00:00:05). The table is in memory unless
// --registry etcd (Registry, CSPNET_Registry) puts it in etcd (section Etcd, --etcd-endpoints),
// where several NameServers can share it. See docs/NAMESERVER.md.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using CspNet.NameServer.Etcd;
using CspNet.Remote.NameServer;
using CspNet.Services;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

WebApplication app;
try
{
    WebApplicationBuilder builder = ServiceProgram.CreateBuilder(
        args,
        new Dictionary<string, string>
        {
            ["--port"] = "Port",
            ["--address"] = "Address",
            ["--status-port"] = "StatusPage:Port",
            ["--registry"] = "Registry",
            ["--etcd-endpoints"] = "Etcd:Endpoints",
            ["--cluster-key-file"] = "NameServer:ClusterKeyFile",
        },
        "CspNet NameServer");
    ServiceProgram.ReadSecretFiles(builder.Configuration, "NameServer:ClusterKey");

    (IPAddress address, int port) = ListenEndpoint(builder.Configuration);

    // The status page (docs/NAMESERVER.md#status-page) is opt-in: StatusPage:Port (--status-port)
    // opens a second, HTTP/1.1 endpoint for browsers, on StatusPage:Address (default 127.0.0.1).
    (IPAddress Address, int Port)? status = StatusEndpoint(builder.Configuration);
    builder.WebHost.ConfigureKestrel(kestrel =>
    {
        kestrel.Listen(address, port, listen => listen.Protocols = HttpProtocols.Http2);
        if (status is { } page)
        {
            kestrel.Listen(page.Address, page.Port, listen => listen.Protocols = HttpProtocols.Http1);
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
            $"Listening on {address} exposes the NameServer: set NameServer:ClusterKey (environment CSPNET_NameServer__ClusterKey) to the secret every program is given, or listen on 127.0.0.1.");
    }

    if (status is { } exposed && !IPAddress.IsLoopback(exposed.Address) && !sharedKey)
    {
        throw new ArgumentException(
            $"Serving the status page on {exposed.Address} exposes every name: set NameServer:ClusterKey (the page then asks for it), or serve it on 127.0.0.1.");
    }
}
catch (Exception e) when (e is FormatException or ArgumentException or OptionsValidationException)
{
    // A configuration mistake: say which, without a stack trace, and exit with a usage error.
    return ServiceProgram.ConfigurationError("cspnet-nameserver", e);
}

return await ServiceProgram.RunAsync(app, "cspnet-nameserver").ConfigureAwait(false);

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
