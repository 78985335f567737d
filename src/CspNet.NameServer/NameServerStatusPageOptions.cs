using System;
using System.Net;

namespace CspNet.NameServer;

/// <summary>Settings of the NameServer's status page (docs/NAMESERVER.md, "Status page").</summary>
/// <remarks>
/// Browsers speak HTTP/1.1 (or HTTP/2 only over TLS), while the NameServer's gRPC endpoint is
/// HTTP/2 without TLS, and Kestrel cannot serve both on one cleartext port: the page has an
/// endpoint of its own. <see cref="Enabled"/>, <see cref="Address"/> and <see cref="Port"/> are
/// the endpoint <see cref="NameServerHost"/> opens; in your own ASP.NET Core host you open it
/// yourself and call <c>MapCspNameServerStatus</c>.
/// </remarks>
public sealed class NameServerStatusPageOptions
{
    /// <summary>Whether <see cref="NameServerHost"/> serves the page. Default <see langword="true"/>.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// The address the page's HTTP/1.1 endpoint listens on. Default <see cref="IPAddress.Loopback"/>;
    /// any other address needs <see cref="NameServerOptions.ClusterKey"/>, which the page then asks for.
    /// </summary>
    public IPAddress Address { get; set; } = IPAddress.Loopback;

    /// <summary>The page's TCP port; 0 (the default) picks a free port, which <see cref="NameServerHost.StatusUri"/> reports.</summary>
    public int Port { get; set; }

    /// <summary>How often the page reloads itself: 1 second to 1 hour, whole seconds. Default 2 seconds.</summary>
    public TimeSpan Refresh { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>Throws when a setting is out of range.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A setting is out of range.</exception>
    /// <exception cref="ArgumentNullException"><see cref="Address"/> is <see langword="null"/>.</exception>
    public void Validate()
    {
        ArgumentNullException.ThrowIfNull(Address);
        ArgumentOutOfRangeException.ThrowIfNegative(Port);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(Port, 65535);
        if (Refresh < TimeSpan.FromSeconds(1) || Refresh > TimeSpan.FromHours(1) || Refresh.Ticks % TimeSpan.TicksPerSecond != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(Refresh), Refresh, "Refresh must be whole seconds between 1 second and 1 hour (a page's meta refresh counts in seconds).");
        }
    }
}
