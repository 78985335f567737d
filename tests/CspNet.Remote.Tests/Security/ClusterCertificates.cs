using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CspNet.Remote.Tests.Security;

/// <summary>
/// A cluster's certificate authority made for a test, and certificates it issues for addresses,
/// as a user makes them with openssl (docs/SECURITY.md): in memory, or as PEM files.
/// </summary>
internal sealed class ClusterCertificates : IDisposable
{
    private const string ServerUse = "1.3.6.1.5.5.7.3.1";
    private const string ClientUse = "1.3.6.1.5.5.7.3.2";
    private readonly RSA _key = RSA.Create(2048);

    internal ClusterCertificates(string name = "CspNet test cluster")
    {
        var request = new CertificateRequest($"CN={name}", _key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        Authority = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-10), DateTimeOffset.UtcNow.AddDays(2));
    }

    /// <summary>The authority (with its key): what every program trusts.</summary>
    internal X509Certificate2 Authority { get; }

    /// <summary>The authority without its key, as programs are given it.</summary>
    internal X509Certificate2 PublicAuthority => X509CertificateLoader.LoadCertificate(Authority.RawData);

    /// <summary>A certificate with its key for <paramref name="addresses"/> (IPs or DNS names); by default for both server and client use.</summary>
    internal X509Certificate2 Issue(string[] addresses, bool server = true, bool client = true)
    {
        using RSA key = RSA.Create(2048);
        var request = new CertificateRequest($"CN={addresses[0]}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        foreach (string address in addresses)
        {
            if (IPAddress.TryParse(address, out IPAddress? ip))
            {
                names.AddIpAddress(ip);
            }
            else
            {
                names.AddDnsName(address);
            }
        }

        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyEncipherment, true));
        var uses = new OidCollection();
        if (server)
        {
            uses.Add(new Oid(ServerUse));
        }

        if (client)
        {
            uses.Add(new Oid(ClientUse));
        }

        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(uses, false));
        byte[] serial = RandomNumberGenerator.GetBytes(16);
        serial[0] &= 0x7f;
        using X509Certificate2 issued = request.Create(Authority, DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1), serial);
        using X509Certificate2 withKey = issued.CopyWithPrivateKey(key);

        // Through PKCS#12 so that the key is usable by SslStream on every platform.
        return X509CertificateLoader.LoadPkcs12(withKey.Export(X509ContentType.Pkcs12), null);
    }

    /// <summary>Writes <paramref name="certificate"/> and its key as PEM files in <paramref name="folder"/>; returns their paths.</summary>
    internal static (string Certificate, string Key) WritePem(X509Certificate2 certificate, string folder, string name)
    {
        string certificatePath = Path.Combine(folder, name + ".crt");
        string keyPath = Path.Combine(folder, name + ".key");
        File.WriteAllText(certificatePath, certificate.ExportCertificatePem());
        using RSA key = certificate.GetRSAPrivateKey()!;
        File.WriteAllText(keyPath, key.ExportPkcs8PrivateKeyPem());
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(keyPath, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
        return (certificatePath, keyPath);
    }

    /// <summary>Writes the authority's certificate (no key) as a PEM file; returns its path.</summary>
    internal string WriteAuthorityPem(string folder)
    {
        string path = Path.Combine(folder, "cluster-ca.crt");
        File.WriteAllText(path, Authority.ExportCertificatePem());
        return path;
    }

    /// <summary>
    /// The PEM files, in <paramref name="folder"/>, of the authority and of a certificate for
    /// <paramref name="address"/> (server and client use), made on first use; their paths.
    /// </summary>
    internal (string Certificate, string Key, string Authority) FilesFor(string address, string folder)
    {
        string authority = Path.Combine(folder, "cluster-ca.crt");
        if (!File.Exists(authority))
        {
            WriteAuthorityPem(folder);
        }

        string certificate = Path.Combine(folder, address + ".crt");
        if (!File.Exists(certificate))
        {
            using X509Certificate2 issued = Issue([address]);
            WritePem(issued, folder, address);
        }

        return (certificate, Path.Combine(folder, address + ".key"), authority);
    }

    public void Dispose()
    {
        Authority.Dispose();
        _key.Dispose();
    }
}
