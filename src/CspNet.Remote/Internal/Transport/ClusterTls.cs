using System;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// TLS between the programs of one system: every program and the NameServer present a certificate
/// issued by the cluster's authority (<see cref="CspNodeOptions.TrustedCertificate"/>), and accept
/// only certificates from it: a server's for the address dialled, a client's marked for client use.
/// </summary>
/// <remarks>
/// The machine's trusted roots play no part: a certificate from a public authority (or another
/// cluster) is refused, so no one outside the cluster can pose as one of its programs.
/// </remarks>
internal static class ClusterTls
{
    // Extended key usages (RFC 5280): a certificate that names its uses must name this one.
    private const string ServerAuthentication = "1.3.6.1.5.5.7.3.1";
    private const string ClientAuthentication = "1.3.6.1.5.5.7.3.2";

    /// <summary>The client side of a link or NameServer call: present ours, check theirs.</summary>
    internal static SslClientAuthenticationOptions ClientOptions(X509Certificate2 authority, X509Certificate2? certificate) => new()
    {
        ClientCertificates = certificate is null ? null : new X509CertificateCollection { certificate },
        RemoteCertificateValidationCallback = (_, presented, _, errors) => IsValidServer(presented, errors, authority),
    };

    /// <summary>Whether a server's certificate is the cluster's, for the address dialled, and usable by a server.</summary>
    internal static bool IsValidServer(X509Certificate? presented, SslPolicyErrors errors, X509Certificate2 authority)
    {
        // The name check is the platform's (SAN IP or DNS against the address dialled); the chain
        // is checked below against the cluster's authority alone, so its verdict here is ignored.
        if (presented is null || (errors & (SslPolicyErrors.RemoteCertificateNotAvailable | SslPolicyErrors.RemoteCertificateNameMismatch)) != 0)
        {
            return false;
        }

        using X509Certificate2 certificate = X509CertificateLoader.LoadCertificate(presented.GetRawCertData());
        return ChainsTo(certificate, authority) && AllowsUse(certificate, ServerAuthentication);
    }

    /// <summary>Whether a client's certificate is the cluster's and usable by a client.</summary>
    internal static bool IsValidClient(X509Certificate2? presented, X509Certificate2 authority) =>
        presented is not null && ChainsTo(presented, authority) && AllowsUse(presented, ClientAuthentication);

    /// <summary>Whether <paramref name="certificate"/> chains to <paramref name="authority"/> alone (not to the machine's roots).</summary>
    internal static bool ChainsTo(X509Certificate2 certificate, X509Certificate2 authority)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationFlags = X509VerificationFlags.NoFlag;
        return chain.Build(certificate);
    }

    /// <summary>A certificate without an extended key usage may serve any; one with it, only those it lists.</summary>
    private static bool AllowsUse(X509Certificate2 certificate, string usage)
    {
        foreach (X509Extension extension in certificate.Extensions)
        {
            if (extension is X509EnhancedKeyUsageExtension uses)
            {
                foreach (Oid oid in uses.EnhancedKeyUsages)
                {
                    if (oid.Value == usage)
                    {
                        return true;
                    }
                }

                return false;
            }
        }

        return true;
    }
}
