using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using CspNet.NameServer;
using CspNet.NameServer.Etcd;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>The etcd registry over TLS with client certificates (etcd's --client-cert-auth), certificates made by the test.</summary>
[RequiresEtcd]
public sealed class EtcdTlsTests : IDisposable
{
    private readonly DirectoryInfo _dir = Directory.CreateTempSubdirectory("cspnet-etcd-tls-");

    public void Dispose() => _dir.Delete(recursive: true);

    [RegistryFact(Timeout = 60000)]
    public async Task Registry_MutualTlsWithTheClusterCa_RegistersAndResolves_AndWithoutAClientCertificateIsRefused()
    {
        using RSA caKey = RSA.Create(2048);
        var caRequest = new CertificateRequest("CN=CspNet test etcd CA", caKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        caRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        caRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        using X509Certificate2 ca = caRequest.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        string caFile = Write("ca.pem", ca.ExportCertificatePem());
        (string serverCert, string serverKey) = Issue(ca, "etcd", "1.3.6.1.5.5.7.3.1", 1);
        (string clientCert, string clientKey) = Issue(ca, "nameserver", "1.3.6.1.5.5.7.3.2", 2);
        await using EtcdProcess etcd = await EtcdProcess.StartAsync(
            "--cert-file", serverCert, "--key-file", serverKey, "--trusted-ca-file", caFile, "--client-cert-auth");
        var options = new EtcdNameRegistryOptions
        {
            Endpoints = etcd.ClientUrl,
            Prefix = "/tls/",
            CaFile = caFile,
            ClientCertificateFile = clientCert,
            ClientKeyFile = clientKey,
            OperationTimeout = TimeSpan.FromSeconds(3),
        };

        using var registry = new EtcdNameRegistry(options);
        NameLease lease = await registry.OpenLeaseAsync(new LinkEndpoint("127.0.0.1", 7000), "tls");
        await registry.RegisterAsync(lease.Id, NameRegistryContractTests.Channel("secure"), returnExisting: false);
        using var anonymous = new EtcdNameRegistry(new EtcdNameRegistryOptions { Endpoints = etcd.ClientUrl, Prefix = "/tls/", CaFile = caFile, OperationTimeout = TimeSpan.FromSeconds(3) });

        Assert.NotNull(await registry.ResolveAsync("secure", TimeSpan.Zero));
        Assert.StartsWith("https://", etcd.ClientUrl, StringComparison.Ordinal);
        await Assert.ThrowsAsync<EtcdRegistryUnavailableException>(() => anonymous.ResolveAsync("secure", TimeSpan.Zero));
    }

    private (string Certificate, string Key) Issue(X509Certificate2 ca, string name, string usage, byte serial)
    {
        using RSA key = RSA.Create(2048);
        var request = new CertificateRequest("CN=" + name, key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddIpAddress(IPAddress.Loopback);
        names.AddDnsName("localhost");
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyEncipherment, true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid(usage)], false));
        using X509Certificate2 certificate = request.Create(ca, DateTimeOffset.UtcNow.AddHours(-1), DateTimeOffset.UtcNow.AddHours(12), [serial]);
        return (Write(name + ".pem", certificate.ExportCertificatePem()), Write(name + "-key.pem", key.ExportPkcs8PrivateKeyPem()));
    }

    private string Write(string file, string pem)
    {
        string path = Path.Combine(_dir.FullName, file);
        File.WriteAllText(path, pem);
        return path;
    }
}
