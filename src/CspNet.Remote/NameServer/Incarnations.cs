using System;
using System.Security.Cryptography;
using System.Text;

namespace CspNet.Remote.NameServer;

/// <summary>
/// The public face of a lease: a program's incarnation as other programs see it in resolved
/// entries. It is derived from the lease id by a one-way hash, so learning it (anyone who can
/// resolve a name does) gives no power to renew, close or register under that lease.
/// </summary>
internal static class Incarnations
{
    internal static string Of(string leaseId) =>
        Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(leaseId)).AsSpan(0, 16));
}
