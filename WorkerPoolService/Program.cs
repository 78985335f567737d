// The CspNet worker pool as a program: console, systemd unit or Windows service.
// Configuration (later wins): appsettings.json next to the program, environment variables
// prefixed CSPNET_ (CSPNET_WorkerPool__Workers, CSPNET_WorkerPool__Token), then the command line
// (--port 9091, --address 0.0.0.0, --nameserver http://host:9090, --workers 4, --token-file F,
// --name, --certificate path.pfx, --client-ca ca.cer). Secrets never on the command line: files
// (--token-file, --cluster-key-file, --certificate-password-file) or the environment.
// See docs/WORKERPOOL.md and docs/SECURITY.md.
using System;
using System.Collections.Generic;
using System.IO;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using CspNet.Remote.Workers;
using CspNet.Services;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

WebApplication app;
try
{
    WebApplicationBuilder builder = ServiceProgram.CreateBuilder(
        args,
        new Dictionary<string, string>
        {
            ["--port"] = "WorkerPool:Port",
            ["--address"] = "WorkerPool:Address",
            ["--advertised-host"] = "WorkerPool:AdvertisedHost",
            ["--nameserver"] = "WorkerPool:NameServer",
            ["--workers"] = "WorkerPool:Workers",
            ["--name"] = "WorkerPool:Name",
            ["--token-file"] = "WorkerPool:TokenFile",
            ["--cluster-key-file"] = "WorkerPool:ClusterKeyFile",
            ["--certificate"] = "WorkerPool:CertificatePath",
            ["--certificate-password-file"] = "WorkerPool:CertificatePasswordFile",
            ["--client-ca"] = "WorkerPool:ClientCertificateAuthorityPath",
        },
        "CspNet WorkerPool");

    ServiceProgram.ReadSecretFiles(builder.Configuration, "WorkerPool:Token", "WorkerPool:ClusterKey", "WorkerPool:CertificatePassword");
    WorkerPoolOptions options = ReadOptions(builder.Configuration.GetSection("WorkerPool"));

    // Refuses an exposed pool without authentication, among other mistakes: nothing has started yet.
    options.Validate();
    builder.WebHost.ConfigureKestrel(kestrel => kestrel.ListenForWorkerPool(options));
    builder.WebHost.UseKestrelHttpsConfiguration();
    builder.Services.AddCspWorkerPool(options);
    builder.Services.AddGrpcHealthChecks().AddCheck("workerpool", static () => HealthCheckResult.Healthy());

    app = builder.Build();
    app.MapCspWorkerPool();
    app.MapGrpcHealthChecksService();
}
catch (Exception e) when (e is FormatException or ArgumentException or InvalidOperationException or CryptographicException or IOException)
{
    // A configuration mistake: say which, without a stack trace, and exit with a usage error.
    return ServiceProgram.ConfigurationError("cspnet-workerpool", e);
}

// Besides a port in use: a NameServer unreachable at start-up (the pool could not be found, so it does not run).
return await ServiceProgram.RunAsync(app, "cspnet-workerpool", static e => e is CspNet.Remote.NameServer.NameServerUnavailableException or CspNet.PeerLostException)
    .ConfigureAwait(false);

static WorkerPoolOptions ReadOptions(IConfigurationSection section)
{
    var options = new WorkerPoolOptions();
    section.Bind(options);
    if (section["CertificatePath"] is { Length: > 0 } certificate)
    {
        options.Certificate = X509CertificateLoader.LoadPkcs12FromFile(certificate, section["CertificatePassword"]);
    }

    if (section["ClientCertificateAuthorityPath"] is { Length: > 0 } authority)
    {
        options.ClientCertificateAuthority = X509CertificateLoader.LoadCertificateFromFile(authority);
    }

    return options;
}
