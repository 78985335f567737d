using System.Security.Cryptography.X509Certificates;

namespace CspNet.Remote.Internal.Workers;

/// <summary>Checks client certificates against <see cref="CspNet.Remote.Workers.WorkerPoolOptions.ClientCertificateAuthority"/>.</summary>
internal static class ClientCertificates
{
    internal static bool ChainsTo(X509Certificate2 certificate, X509Certificate2 authority)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationFlags = X509VerificationFlags.NoFlag;
        return chain.Build(certificate);
    }
}
