using System;
using System.Net;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace CspNet.Remote.Internal.Security;

/// <summary>
/// How CspNet decides whom it gives a secret: a certificate is accepted only if it chains to the
/// configured authority (or is that very certificate), names the host that was dialled, and is
/// meant for its role (server or client authentication); a secret travels in clear text only to
/// this machine.
/// </summary>
internal static class Certificates
{
    /// <summary>The extended key usage of a TLS server certificate.</summary>
    internal const string ServerAuthentication = "1.3.6.1.5.5.7.3.1";

    /// <summary>The extended key usage of a TLS client certificate.</summary>
    internal const string ClientAuthentication = "1.3.6.1.5.5.7.3.2";

    /// <summary>
    /// Whether <paramref name="certificate"/> chains to <paramref name="authority"/> and is valid for
    /// <paramref name="usage"/> (a certificate without an extended key usage is valid for every use, as in TLS).
    /// </summary>
    internal static bool ChainsTo(X509Certificate2 certificate, X509Certificate2 authority, string usage)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationFlags = X509VerificationFlags.NoFlag;
        chain.ChainPolicy.ApplicationPolicy.Add(new Oid(usage));
        return chain.Build(certificate);
    }

    /// <summary>
    /// A server certificate check that trusts <paramref name="trusted"/> only: either the server
    /// presents that very certificate (pinned), or one it issued, for server use, naming the host dialled.
    /// </summary>
    internal static RemoteCertificateValidationCallback ServerValidator(X509Certificate2 trusted) =>
        (_, certificate, _, errors) => certificate is not null && AcceptsServer(certificate, trusted, errors);

    private static bool AcceptsServer(X509Certificate certificate, X509Certificate2 trusted, SslPolicyErrors errors)
    {
        using X509Certificate2 presented = X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
        if (presented.RawDataMemory.Span.SequenceEqual(trusted.RawDataMemory.Span))
        {
            return true;
        }

        // The chain errors SslStream reports are against the machine's roots, which are not the
        // authority here; the host-name check is the same whichever authority issued the certificate.
        return (errors & SslPolicyErrors.RemoteCertificateNameMismatch) == 0 && ChainsTo(presented, trusted, ServerAuthentication);
    }

    /// <summary>
    /// The client side of a link or NameServer call in a cluster with certificates: the server must
    /// be the authority's (see <see cref="ServerValidator"/>); this program presents its own, for
    /// servers that require one (mutual TLS).
    /// </summary>
    internal static SslClientAuthenticationOptions ClientOptions(X509Certificate2 authority, X509Certificate2? certificate) => new()
    {
        ClientCertificates = certificate is null ? null : new X509CertificateCollection { certificate },
        RemoteCertificateValidationCallback = ServerValidator(authority),
    };

    /// <summary>Whether a client's certificate (mutual TLS) was issued by <paramref name="authority"/> for client use.</summary>
    internal static bool IsValidClient(X509Certificate2? presented, X509Certificate2 authority) =>
        presented is not null && ChainsTo(presented, authority, ClientAuthentication);

    /// <summary>Whether a secret (cluster key, pool token, process state) may be sent to <paramref name="address"/>: over TLS, or to this machine.</summary>
    internal static bool MayCarrySecrets(Uri address) =>
        address.Scheme == Uri.UriSchemeHttps || IsLoopback(address.Host);

    /// <summary>Whether <paramref name="host"/> names this machine's loopback interface.</summary>
    internal static bool IsLoopback(string host) =>
        string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase)
        || (IPAddress.TryParse(host.Trim('[', ']'), out IPAddress? ip) && IPAddress.IsLoopback(ip));
}
