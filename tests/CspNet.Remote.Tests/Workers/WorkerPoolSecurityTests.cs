using System.Net;
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
        using X509Certificate2 server = TestCertificates.SelfSigned("CN=pool", isAuthority: false);
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
        using X509Certificate2 server = TestCertificates.SelfSigned("CN=pool", isAuthority: false);
        using X509Certificate2 authority = TestCertificates.SelfSigned("CN=cspnet test authority", isAuthority: true);
        using X509Certificate2 member = TestCertificates.IssuedBy(authority, "CN=client");
        using X509Certificate2 stranger = TestCertificates.SelfSigned("CN=stranger", isAuthority: false);
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

        // The refused caller goes first: after a run the pool's free count reaches the NameServer
        // a moment later, and a caller that finds no free pool runs its processes locally.
        var e = await Assert.ThrowsAsync<UnauthorizedAccessException>(() => refused.RunAsync());
        await accepted.RunAsync();

        Assert.Equal(1, accepted.RanRemotely);
        Assert.Contains("client certificate", e.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_PoolRegisteredWithoutTlsAndCallerTrustingACertificate_NotUsedAndTokenNotSent()
    {
        // Whoever registers a pool chooses its tls flag; a client that trusts a certificate must not believe it.
        using X509Certificate2 authority = TestCertificates.SelfSigned("CN=cspnet test authority", isAuthority: true);
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using WorkerPoolHost impostor = await WorkerPoolHost.StartAsync(PoolOptions(system, o => o.Token = "secret"));
        CspNode client = await system.NodeAsync("client", o =>
        {
            o.WorkerPoolTrustedCertificate = authority;
            o.WorkerPoolToken = "secret";
        });
        var run = new DistParallel([new StateJob(1)], client);

        await run.RunAsync();

        Assert.False(impostor.Uri.Scheme == "https");
        Assert.Equal(0, run.RanRemotely);
        Assert.Equal(1, run.RanLocally);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_PoolCertificateFromTheTrustedAuthorityForAnotherHost_NotUsed()
    {
        using X509Certificate2 authority = TestCertificates.SelfSigned("CN=cspnet test authority", isAuthority: true);
        using X509Certificate2 elsewhere = TestCertificates.IssuedBy(authority, "CN=other", TestCertificates.ServerUse, hostName: "other.example");
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(PoolOptions(system, o =>
        {
            o.Certificate = elsewhere;
            o.Token = "secret";
        }));
        CspNode client = await system.NodeAsync("client", o =>
        {
            o.WorkerPoolTrustedCertificate = authority;
            o.WorkerPoolToken = "secret";
        });
        var run = new DistParallel([new StateJob(1)], client);

        await run.RunAsync();

        Assert.Equal(0, run.RanRemotely);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_PoolCertificateFromTheTrustedAuthorityForItsAddress_RunsRemotely()
    {
        using X509Certificate2 authority = TestCertificates.SelfSigned("CN=cspnet test authority", isAuthority: true);
        using X509Certificate2 server = TestCertificates.IssuedBy(authority, "CN=pool", TestCertificates.ServerUse);
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(PoolOptions(system, o => o.Certificate = server));
        CspNode client = await system.NodeAsync("client", o => o.WorkerPoolTrustedCertificate = authority);
        var run = new DistParallel([new StateJob(1)], client);

        await run.RunAsync();

        Assert.Equal(1, run.RanRemotely);
    }

    [Fact(Timeout = Timeout)]
    public async Task DistParallel_MutualTlsWithAServerCertificateAsClientCertificate_Refused()
    {
        using X509Certificate2 server = TestCertificates.SelfSigned("CN=pool", isAuthority: false);
        using X509Certificate2 authority = TestCertificates.SelfSigned("CN=cspnet test authority", isAuthority: true);
        using X509Certificate2 serverOnly = TestCertificates.IssuedBy(authority, "CN=some server", TestCertificates.ServerUse);
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(PoolOptions(system, o =>
        {
            o.Certificate = server;
            o.ClientCertificateAuthority = authority;
        }));
        CspNode client = await system.NodeAsync("client", o =>
        {
            o.WorkerPoolTrustedCertificate = server;
            o.WorkerPoolClientCertificate = serverOnly;
        });
        var run = new DistParallel([new StateJob(1)], client);

        var e = await Assert.ThrowsAsync<UnauthorizedAccessException>(() => run.RunAsync());

        Assert.Contains("client authentication", e.Message, StringComparison.Ordinal);
    }

    [NonLoopbackFact(Timeout = Timeout)]
    public async Task DistParallel_PoolOnAnotherMachineOverPlainHttp_NothingIsSentToIt()
    {
        IPAddress outside = TestNetwork.NonLoopbackAddress()!;
        using var listener = new System.Net.Sockets.TcpListener(outside, 0);
        listener.Start();
        await using PoolSystem system = await PoolSystem.StartAsync();
        CspNet.NameServer.NameLease lease = await system.Host.Registry.OpenLeaseAsync(new Remote.NameServer.LinkEndpoint("127.0.0.1", 1), "stranger");
        await system.Host.Registry.RegisterPoolAsync(lease.Id, new Remote.NameServer.WorkerPoolEntry
        {
            Name = "stranger",
            Endpoint = new Remote.NameServer.LinkEndpoint(outside.ToString(), ((IPEndPoint)listener.LocalEndpoint).Port),
            Workers = 4,
            FreeWorkers = 4,
        });
        CspNode client = await system.NodeAsync("client", o => o.WorkerPoolToken = "secret");
        var run = new DistParallel([new StateJob(1)], client);

        await run.RunAsync();

        Assert.Equal(1, run.RanLocally);
        Assert.False(listener.Pending(), "The client connected to a pool it would have sent its token to in clear text.");
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

    /// <summary>The real packer, with the job or the image changed on the way, as an attacker on the path would.</summary>
    private sealed class RewritingShipper : IProcessShipper
    {
        public Func<ShippedProcess, ShippedProcess>? Rewrite { get; init; }

        public bool Tamper { get; init; }

        public ShippedProcess Pack(object process) => Rewrite is null ? ProcessPacker.Pack(process) : Rewrite(ProcessPacker.Pack(process));

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
