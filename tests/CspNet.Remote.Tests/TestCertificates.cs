using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CspNet.Remote.Tests;

/// <summary>Certificates made at run time for TLS tests: self-signed, authorities, and certificates they issue.</summary>
internal static class TestCertificates
{
    internal const string ServerUse = "1.3.6.1.5.5.7.3.1";
    internal const string ClientUse = "1.3.6.1.5.5.7.3.2";

    internal static X509Certificate2 SelfSigned(string subject, bool isAuthority)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        CertificateRequest request = Request(subject, key, isAuthority, hostName: null);
        using X509Certificate2 made = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddHours(1));

        // A PKCS#12 round trip: on Linux, a TLS server needs the key in a form SslStream can use.
        return X509CertificateLoader.LoadPkcs12(made.Export(X509ContentType.Pkcs12), null);
    }

    /// <summary>
    /// A certificate <paramref name="authority"/> issues for <paramref name="usage"/> (and
    /// <paramref name="alsoFor"/>: a program's certificate serves and dials, so it needs both),
    /// naming 127.0.0.1 or <paramref name="hostName"/>.
    /// </summary>
    internal static X509Certificate2 IssuedBy(X509Certificate2 authority, string subject, string usage = ClientUse, string? hostName = null, string? alsoFor = null)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        CertificateRequest request = Request(subject, key, isAuthority: false, hostName);
        var usages = new OidCollection { new Oid(usage) };
        if (alsoFor is not null)
        {
            usages.Add(new Oid(alsoFor));
        }

        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(usages, false));
        using X509Certificate2 issued = request.Create(authority, DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddMinutes(50), RandomNumberGenerator.GetBytes(8));
        using X509Certificate2 withKey = issued.CopyWithPrivateKey(key);
        return X509CertificateLoader.LoadPkcs12(withKey.Export(X509ContentType.Pkcs12), null);
    }

    private static CertificateRequest Request(string subject, ECDsa key, bool isAuthority, string? hostName)
    {
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(isAuthority, false, 0, isAuthority));
        if (isAuthority)
        {
            request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.DigitalSignature, true));
        }
        else
        {
            var names = new SubjectAlternativeNameBuilder();
            if (hostName is null)
            {
                names.AddIpAddress(IPAddress.Loopback);
            }
            else
            {
                names.AddDnsName(hostName);
            }

            request.CertificateExtensions.Add(names.Build());
        }

        return request;
    }
}
