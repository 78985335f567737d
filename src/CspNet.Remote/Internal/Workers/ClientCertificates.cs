using System.Security.Cryptography.X509Certificates;
using CspNet.Remote.Internal.Transport;

namespace CspNet.Remote.Internal.Workers;

/// <summary>Checks client certificates against <see cref="CspNet.Remote.Workers.WorkerPoolOptions.ClientCertificateAuthority"/>.</summary>
internal static class ClientCertificates
{
    internal static bool ChainsTo(X509Certificate2 certificate, X509Certificate2 authority) => ClusterTls.ChainsTo(certificate, authority);
}
