using System;
using System.Collections.Generic;
using System.IO;
using System.Net;

namespace CspNet.NameServer.Etcd;

/// <summary>How the NameServer reaches etcd (configuration section <c>Etcd</c> of the NameServer program).</summary>
/// <remarks>
/// The NameServer's own settings (lease time to live, maximum resolve wait, limits) stay in
/// <c>NameServerOptions</c>; these say only where etcd is and how to authenticate to it.
/// Secrets are never options: the password is read from <see cref="PasswordFile"/> or from the
/// environment variable named by <see cref="PasswordEnvironmentVariable"/>, so it appears
/// neither on a command line nor in a configuration file that is readable by many.
/// </remarks>
public sealed class EtcdNameRegistryOptions
{
    /// <summary>
    /// The etcd cluster's client URLs, separated by commas, all <c>http://</c> or all
    /// <c>https://</c> (as etcdctl's <c>--endpoints</c>). Calls are balanced over them, and a
    /// member that fails is skipped. Default <c>http://127.0.0.1:2379</c>.
    /// </summary>
    public string Endpoints { get; set; } = "http://127.0.0.1:2379";

    /// <summary>
    /// Every key the registry writes starts with this (see docs/NAMESERVER.md for the layout), so
    /// several CspNet clusters, or other applications, can share one etcd. Default <c>/cspnet/</c>.
    /// NameServer replicas that serve the same programs must use the same prefix.
    /// </summary>
    public string Prefix { get; set; } = "/cspnet/";

    /// <summary>A PEM file with the certificate authority that signed etcd's server certificates; <see langword="null"/> trusts the system's store.</summary>
    /// <remarks>Only with <c>https://</c> endpoints.</remarks>
    public string? CaFile { get; set; }

    /// <summary>A PEM certificate the NameServer presents to etcd (etcd's <c>--client-cert-auth</c>); set with <see cref="ClientKeyFile"/>.</summary>
    public string? ClientCertificateFile { get; set; }

    /// <summary>The PEM private key of <see cref="ClientCertificateFile"/>.</summary>
    public string? ClientKeyFile { get; set; }

    /// <summary>The etcd user (etcd's role-based access); <see langword="null"/> when etcd's authentication is off.</summary>
    public string? Username { get; set; }

    /// <summary>A file holding the password of <see cref="Username"/> (its first line); read at start.</summary>
    public string? PasswordFile { get; set; }

    /// <summary>The environment variable that holds the password when <see cref="PasswordFile"/> is not set. Default <c>CSPNET_ETCD_PASSWORD</c>.</summary>
    public string PasswordEnvironmentVariable { get; set; } = "CSPNET_ETCD_PASSWORD";

    /// <summary>How long opening a connection to an etcd member may take. Default 5 seconds.</summary>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How long one registry operation may wait for etcd (retries included) before it fails with
    /// <see cref="EtcdRegistryUnavailableException"/>, which programs see as UNAVAILABLE. Waiting
    /// resolves are bounded by their own wait instead. Default 5 seconds.
    /// </summary>
    public TimeSpan OperationTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Throws when a setting is out of range or the settings contradict each other.</summary>
    /// <exception cref="ArgumentException">A setting is malformed or out of range.</exception>
    public void Validate()
    {
        _ = EndpointUris();
        if (string.IsNullOrEmpty(Prefix) || Prefix.Length > 256 || Prefix.AsSpan().ContainsAnyInRange('\0', '\u001f'))
        {
            throw new ArgumentException("Etcd:Prefix must be 1..256 characters without control characters, e.g. /cspnet/.", nameof(Prefix));
        }

        if (ConnectTimeout <= TimeSpan.Zero || ConnectTimeout > TimeSpan.FromMinutes(10))
        {
            throw new ArgumentOutOfRangeException(nameof(ConnectTimeout), ConnectTimeout, "Etcd:ConnectTimeout must be above zero and at most 10 minutes.");
        }

        if (OperationTimeout <= TimeSpan.Zero || OperationTimeout > TimeSpan.FromMinutes(10))
        {
            throw new ArgumentOutOfRangeException(nameof(OperationTimeout), OperationTimeout, "Etcd:OperationTimeout must be above zero and at most 10 minutes.");
        }

        if ((ClientCertificateFile is null) != (ClientKeyFile is null))
        {
            throw new ArgumentException("Set both Etcd:ClientCertificateFile and Etcd:ClientKeyFile, or neither.", nameof(ClientKeyFile));
        }

        foreach (string? file in new[] { CaFile, ClientCertificateFile, ClientKeyFile, PasswordFile })
        {
            if (file is not null && !File.Exists(file))
            {
                throw new ArgumentException($"The file '{file}' named in the Etcd settings does not exist.", nameof(file));
            }
        }
    }

    /// <summary>The endpoints as URIs, checked.</summary>
    internal IReadOnlyList<Uri> EndpointUris()
    {
        var uris = new List<Uri>();
        foreach (string part in (Endpoints ?? "").Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!Uri.TryCreate(part, UriKind.Absolute, out Uri? uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps)
                || uri.AbsolutePath != "/" || uri.IsDefaultPort)
            {
                throw new ArgumentException($"Etcd:Endpoints: '{part}' is not an etcd client URL such as http://127.0.0.1:2379 or https://etcd-1.example:2379.", nameof(Endpoints));
            }

            uris.Add(uri);
        }

        if (uris.Count == 0)
        {
            throw new ArgumentException("Etcd:Endpoints is empty: give the etcd cluster's client URLs, e.g. http://127.0.0.1:2379.", nameof(Endpoints));
        }

        bool tls = uris[0].Scheme == Uri.UriSchemeHttps;
        if (uris.Exists(u => (u.Scheme == Uri.UriSchemeHttps) != tls))
        {
            throw new ArgumentException("Etcd:Endpoints mixes http:// and https://: use one scheme for every member.", nameof(Endpoints));
        }

        if (!tls && (CaFile is not null || ClientCertificateFile is not null))
        {
            throw new ArgumentException("Etcd:CaFile and Etcd:ClientCertificateFile need https:// endpoints.", nameof(Endpoints));
        }

        // A password sent over h2c can be read by anyone on the path: only loopback is exempt.
        if (!tls && Username is not null && uris.Exists(u => !IsLoopback(u)))
        {
            throw new ArgumentException("Etcd:Username over http:// to another host would send the password in clear text: use https:// endpoints.", nameof(Username));
        }

        return uris;
    }

    private static bool IsLoopback(Uri uri) =>
        uri.IsLoopback || (IPAddress.TryParse(uri.Host.Trim('[', ']'), out IPAddress? address) && IPAddress.IsLoopback(address));
}
