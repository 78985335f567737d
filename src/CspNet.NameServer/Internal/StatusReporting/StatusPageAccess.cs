using System;
using System.Net;
using System.Text;
using CspNet.Remote.Internal.Transport;
using Microsoft.AspNetCore.Http;

namespace CspNet.NameServer.Internal.StatusReporting;

/// <summary>
/// Who may read the status page, which lists every name: the same rule as the NameServer's gRPC
/// service when it has a cluster key, and this machine only when it has none.
/// </summary>
/// <remarks>
/// <para>
/// With <see cref="NameServer.NameServerOptions.ClusterKey"/> set, a caller must present the key,
/// as the password of HTTP Basic authentication (what a browser asks for; any user name) or in
/// the header the gRPC clients send. Like the gRPC service's key, it travels in clear text unless
/// a TLS proxy is in front.
/// </para>
/// <para>
/// Without a key, only loopback callers are served, and only when the Host header is an IP
/// literal or <c>localhost</c>: a web page from elsewhere could otherwise rebind its own DNS
/// name to 127.0.0.1 and have the browser of someone on this machine read the page for it.
/// </para>
/// </remarks>
internal static class StatusPageAccess
{
    internal const string Realm = "CspNet NameServer";

    /// <summary>Returns <see langword="null"/> when the caller may read the page, else the reason it may not and the status to answer.</summary>
    internal static (int Status, string Message)? Refusal(HttpContext context, string? clusterKey)
    {
        if (!string.IsNullOrEmpty(clusterKey))
        {
            return NodeTransport.KeyMatches(clusterKey, context.Request.Headers[NodeTransport.ClusterKeyHeader].ToString())
                || NodeTransport.KeyMatches(clusterKey, BasicPassword(context.Request.Headers.Authorization.ToString()))
                ? null
                : (StatusCodes.Status401Unauthorized,
                    "This NameServer has a cluster key: give it as the password (any user name), or in the header " + NodeTransport.ClusterKeyHeader + ".");
        }

        if (context.Connection.RemoteIpAddress is not { } remote || !IPAddress.IsLoopback(remote.IsIPv4MappedToIPv6 ? remote.MapToIPv4() : remote))
        {
            return (StatusCodes.Status403Forbidden,
                "This NameServer has no cluster key, so its status page answers only callers on its own machine: set NameServerOptions.ClusterKey to open it to others.");
        }

        return IsLiteralOrLocalhost(context.Request.Host.Host)
            ? null
            : (StatusCodes.Status403Forbidden,
                "Open the status page by IP address or as localhost (http://127.0.0.1:PORT/status): other host names are refused so that no web page can rebind its name to this machine.");
    }

    private static bool IsLiteralOrLocalhost(string host) =>
        string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase) || IPAddress.TryParse(host, out _);

    private static string? BasicPassword(string authorization)
    {
        const string Scheme = "Basic ";
        if (!authorization.StartsWith(Scheme, StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }

        try
        {
            string credentials = Encoding.UTF8.GetString(Convert.FromBase64String(authorization[Scheme.Length..].Trim()));
            int colon = credentials.IndexOf(':', StringComparison.Ordinal);
            return colon < 0 ? null : credentials[(colon + 1)..];
        }
        catch (FormatException)
        {
            return null;
        }
    }
}
