using System;
using System.Globalization;

namespace CspNet.Remote.NameServer;

/// <summary>Where a program's Link service listens, as the program's peers should dial it.</summary>
/// <param name="Host">A host name or an IP literal (IPv6 without brackets).</param>
/// <param name="Port">The TCP port, 1..65535.</param>
public sealed record LinkEndpoint(string Host, int Port)
{
    /// <summary>Returns <c>host:port</c>, with an IPv6 host in brackets.</summary>
    /// <returns>The endpoint as it appears in logs and messages.</returns>
    public override string ToString()
    {
        // An IPv6 literal contains colons; brackets keep the port readable.
        string host = Host is not null && Host.Contains(':', StringComparison.Ordinal) ? "[" + Host + "]" : Host ?? "";
        return host + ":" + Port.ToString(CultureInfo.InvariantCulture);
    }
}
