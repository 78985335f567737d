// The CspNet worker pool as a program (the .NET tool cspnet-workerpool): console, systemd unit or
// Windows service. Configuration (later wins): appsettings.json next to the program, environment
// variables prefixed CSPNET_ (CSPNET_WorkerPool__Workers, CSPNET_WorkerPool__Token), then the
// command line (--port 9091, --address 0.0.0.0, --nameserver http://host:9090, --workers 4,
// --name, --certificate path.pfx, --client-ca ca.cer); secrets (token, cluster key, certificate
// password) from files or the environment only. See docs/WORKERPOOL.md and docs/SECURITY.md.
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

const string Help = """
    cspnet-workerpool: a CspNet worker pool. It registers at a NameServer and runs the processes that
    DistParallel ships to it, loading their code from the client. It runs code that clients send it:
    it binds 127.0.0.1 unless told otherwise, and refuses any other address without a token or
    client certificates (docs/SECURITY.md).

    Usage: cspnet-workerpool [options]

    Options:
      --port PORT                        the pool's port; 0 picks a free one (default 9091)
      --address ADDRESS                  where to listen (default 127.0.0.1)
      --advertised-host HOST             what clients dial (required with 0.0.0.0 or ::)
      --nameserver URL                   where to register (default http://127.0.0.1:9090)
      --workers N                        processes run at once (default: the processor count)
      --name NAME                        the pool's name at the NameServer and in logs
      --certificate PATH.pfx             serve TLS with this certificate
      --client-ca PATH                   require client certificates issued by this authority
      --trusted-ca PATH                  the cluster's authority: the pool's own program dials the
                                         NameServer and other programs over TLS and checks them against it
      --token-file PATH                  clients must send the bearer token read from PATH
      --cluster-key-file PATH            the system's cluster key, read from PATH
      --certificate-password-file PATH   the password of --certificate, read from PATH
      --WorkerPool:Key VALUE             any configuration key, e.g. --WorkerPool:IdleUnload 00:10:00
      -h, --help                         show this help

    Every option is also a configuration key in the WorkerPool section: appsettings.json beside the
    program, or an environment variable (CSPNET_WorkerPool__Workers=4).
    Secrets are never read from the command line, where other users of the machine can see them: give
    the token, the cluster key and the certificate password in files (the -file options above) or
    the environment (CSPNET_WorkerPool__Token, CSPNET_WorkerPool__ClusterKey,
    CSPNET_WorkerPool__CertificatePassword).

    Documentation: docs/WORKERPOOL.md in the CspNet repository.

    """;

if (ServiceProgram.PrintHelpIfAsked(args, Help))
{
    return 0;
}

var switches = new Dictionary<string, string>
{
    ["--port"] = "WorkerPool:Port",
    ["--address"] = "WorkerPool:Address",
    ["--advertised-host"] = "WorkerPool:AdvertisedHost",
    ["--nameserver"] = "WorkerPool:NameServer",
    ["--workers"] = "WorkerPool:Workers",
    ["--name"] = "WorkerPool:Name",
    ["--certificate"] = "WorkerPool:CertificatePath",
    ["--client-ca"] = "WorkerPool:ClientCertificateAuthorityPath",
    ["--trusted-ca"] = "WorkerPool:TrustedCertificatePath",
    ["--token-file"] = "WorkerPool:TokenFile",
    ["--cluster-key-file"] = "WorkerPool:ClusterKeyFile",
    ["--certificate-password-file"] = "WorkerPool:CertificatePasswordFile",
    // Recognised only to be refused with the way to give them (ReadSecrets).
    ["--token"] = "WorkerPool:Token",
    ["--cluster-key"] = "WorkerPool:ClusterKey",
    ["--certificate-password"] = "WorkerPool:CertificatePassword",
};

WebApplication app;
try
{
    WebApplicationBuilder builder = ServiceProgram.CreateBuilder(args, switches, "CspNet WorkerPool");
    ServiceProgram.ReadSecrets(builder, args, switches, [
        ("WorkerPool:Token", "WorkerPool:TokenFile", "--token-file"),
        ("WorkerPool:ClusterKey", "WorkerPool:ClusterKeyFile", "--cluster-key-file"),
        ("WorkerPool:CertificatePassword", "WorkerPool:CertificatePasswordFile", "--certificate-password-file"),
    ]);

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
catch (Exception e) when (e is FormatException or ArgumentException or InvalidOperationException or CryptographicException or IOException or UnauthorizedAccessException)
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

    if (section["TrustedCertificatePath"] is { Length: > 0 } trusted)
    {
        // Without it a pool on another host than its NameServer cannot check the NameServer's
        // certificate (issued by the cluster's own authority) nor dial programs over TLS.
        options.TrustedCertificate = X509CertificateLoader.LoadCertificateFromFile(trusted);
    }

    return options;
}
