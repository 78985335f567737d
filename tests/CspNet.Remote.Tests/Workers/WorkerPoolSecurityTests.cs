using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.TestJobs;
using CspNet.Remote.Workers;

namespace CspNet.Remote.Tests.Workers;

/// <summary>
/// What a pool with the real code store refuses (tampered images, types outside the allow-list)
/// and how it authenticates over TLS and mutual TLS. Certificates are made here, at run time.
/// </summary>
public sealed class WorkerPoolSecurityTests
{
    private const int Timeout = 30_000;

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_ImageTamperedOnTheWay_RefusedAsHashMismatchAndNothingRuns()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(PoolOptions(system));
        CspNode client = await system.NodeAsync("client");
        var run = new DistParallel([new FailingJob("must not run")], client) { Shipper = new RewritingShipper { Tamper = true } };

        var e = await Assert.ThrowsAsync<AggregateException>(() => run.RunAsync());

        ProcessRefusedException refused = Assert.IsType<ProcessRefusedException>(Assert.Single(e.InnerExceptions));
        Assert.Equal("HashMismatch", refused.Reason);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_JobNamingATypeOutsideTheAllowList_RefusedAsTypeNotAllowed()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(PoolOptions(system));
        CspNode client = await system.NodeAsync("client");
        var run = new DistParallel([new StateJob(1)], client) { Shipper = new RewritingShipper { Rewrite = job => job with { TypeName = "System.IO.FileInfo" } } };

        var e = await Assert.ThrowsAsync<AggregateException>(() => run.RunAsync());

        ProcessRefusedException refused = Assert.IsType<ProcessRefusedException>(Assert.Single(e.InnerExceptions));
        Assert.Equal("TypeNotAllowed", refused.Reason);
        Assert.Contains("allow-list", refused.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_PoolServingTlsAndCallerTrustingItsCertificate_RunsRemotely()
    {
        using X509Certificate2 server = SelfSigned("CN=pool", isAuthority: false);
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(PoolOptions(system, o =>
        {
            o.Certificate = server;
            o.Token = "secret";
        }));
        CspNode client = await system.NodeAsync("client", o =>
        {
            o.WorkerPoolTrustedCertificate = server;
            o.WorkerPoolToken = "secret";
        });
        var run = new DistParallel([new StateJob(1)], client);

        await run.RunAsync();

        Assert.Equal("https", pool.Uri.Scheme);
        Assert.Equal(1, run.RanRemotely);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_MutualTls_CallerWithACertificateOfTheAuthorityRunsAndOneWithoutIsRefused()
    {
        using X509Certificate2 server = SelfSigned("CN=pool", isAuthority: false);
        using X509Certificate2 authority = SelfSigned("CN=cspnet test authority", isAuthority: true);
        using X509Certificate2 member = IssuedBy(authority, "CN=client");
        using X509Certificate2 stranger = SelfSigned("CN=stranger", isAuthority: false);
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(PoolOptions(system, o =>
        {
            o.Certificate = server;
            o.ClientCertificateAuthority = authority;
        }));
        CspNode trusted = await system.NodeAsync("trusted", o =>
        {
            o.WorkerPoolTrustedCertificate = server;
            o.WorkerPoolClientCertificate = member;
        });
        CspNode untrusted = await system.NodeAsync("untrusted", o =>
        {
            o.WorkerPoolTrustedCertificate = server;
            o.WorkerPoolClientCertificate = stranger;
        });
        var accepted = new DistParallel([new StateJob(1)], trusted);
        var refused = new DistParallel([new StateJob(2)], untrusted);

        await accepted.RunAsync();
        var e = await Assert.ThrowsAsync<UnauthorizedAccessException>(() => refused.RunAsync());

        Assert.Equal(1, accepted.RanRemotely);
        Assert.Contains("client certificate", e.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task NameServerRestart_PoolRegistersAgainAtItsNextRenewal()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("survivor", 2);

        await system.RestartNameServerAsync();
        await pool.Node.Names!.RenewOnceAsync(CancellationToken.None);
        IReadOnlyList<Remote.NameServer.WorkerPoolEntry> pools = await system.Host.Registry.ListPoolsAsync(0);

        Remote.NameServer.WorkerPoolEntry entry = Assert.Single(pools);
        Assert.Equal("survivor", entry.Name);
        Assert.Equal(pool.Port, entry.Endpoint.Port);
        Assert.Equal(2, entry.FreeWorkers);
    }

    private static WorkerPoolOptions PoolOptions(PoolSystem system, Action<WorkerPoolOptions>? configure = null)
    {
        var options = new WorkerPoolOptions { Name = "pool", Workers = 1, NameServer = system.Host.Uri, PeerTimeout = PoolSystem.PeerTimeout };
        configure?.Invoke(options);
        return options;
    }

    private static X509Certificate2 SelfSigned(string subject, bool isAuthority)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        CertificateRequest request = Request(subject, key, isAuthority);
        using X509Certificate2 made = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddHours(1));

        // A PKCS#12 round trip: on Linux, a TLS server needs the key in a form SslStream can use.
        return X509CertificateLoader.LoadPkcs12(made.Export(X509ContentType.Pkcs12), null);
    }

    private static X509Certificate2 IssuedBy(X509Certificate2 authority, string subject)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        CertificateRequest request = Request(subject, key, isAuthority: false);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.2")], false));
        using X509Certificate2 issued = request.Create(authority, DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddMinutes(50), RandomNumberGenerator.GetBytes(8));
        using X509Certificate2 withKey = issued.CopyWithPrivateKey(key);
        return X509CertificateLoader.LoadPkcs12(withKey.Export(X509ContentType.Pkcs12), null);
    }

    private static CertificateRequest Request(string subject, ECDsa key, bool isAuthority)
    {
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(isAuthority, false, 0, isAuthority));
        if (!isAuthority)
        {
            var names = new SubjectAlternativeNameBuilder();
            names.AddIpAddress(IPAddress.Loopback);
            request.CertificateExtensions.Add(names.Build());
        }

        return request;
    }

    /// <summary>The real packer, with the job or the image changed on the way, as an attacker on the path would.</summary>
    private sealed class RewritingShipper : IProcessShipper
    {
        public Func<ShippedProcess, ShippedProcess>? Rewrite { get; init; }

        public bool Tamper { get; init; }

        public ShippedProcess Pack(ICSPProcess process) => Rewrite is null ? ProcessPacker.Pack(process) : Rewrite(ProcessPacker.Pack(process));

        public byte[] ReadImage(ShippedAssembly assembly)
        {
            byte[] image = ProcessPacker.ReadImage(assembly);
            if (Tamper)
            {
                image[^1] ^= 0xFF;
            }

            return image;
        }
    }
}
