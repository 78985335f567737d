using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using dotnet_etcd;

namespace CspNet.NameServer.Etcd;

/// <summary>Builds the etcd client from <see cref="EtcdNameRegistryOptions"/>: endpoints, TLS and authentication.</summary>
internal static class EtcdConnection
{
    internal static EtcdClient Create(EtcdNameRegistryOptions options)
    {
        IReadOnlyList<Uri> endpoints = options.EndpointUris();
        string connectionString = string.Join(',', endpoints.Select(static u => u.GetLeftPart(UriPartial.Authority)));
        bool tls = endpoints[0].Scheme == Uri.UriSchemeHttps;
        TimeSpan connectTimeout = options.ConnectTimeout;
        void ConfigureChannel(Grpc.Net.Client.GrpcChannelOptions channel)
        {
            // After etcd comes back, the NameServer reconnects within seconds, not gRPC's default two minutes.
            channel.MaxReconnectBackoff = TimeSpan.FromSeconds(2);
            if (channel.HttpHandler is SocketsHttpHandler handler)
            {
                handler.ConnectTimeout = connectTimeout;

                // Every waiting Resolve holds one watch stream: more than one connection's worth
                // of streams must not queue behind each other.
                handler.EnableMultipleHttp2Connections = true;
            }
        }

        EtcdClient client = tls
            ? new EtcdClient(connectionString, ssl => ConfigureTls(ssl, options, endpoints), serverName: endpoints[0].IdnHost, configureChannelOptions: ConfigureChannel)
            : new EtcdClient(connectionString, serverName: endpoints[0].IdnHost, configureChannelOptions: ConfigureChannel);
        if (options.Username is { } user)
        {
            client.SetCredentials(user, ReadPassword(options));
        }

        return client;
    }

    private static string ReadPassword(EtcdNameRegistryOptions options)
    {
        string? password = options.PasswordFile is { } file
            ? File.ReadLines(file).FirstOrDefault()
            : Environment.GetEnvironmentVariable(options.PasswordEnvironmentVariable);
        return string.IsNullOrEmpty(password)
            ? throw new ArgumentException(options.PasswordFile is not null
                ? $"Etcd:PasswordFile '{options.PasswordFile}' is empty: its first line is the etcd password of '{options.Username}'."
                : $"Etcd:Username is set but the environment variable {options.PasswordEnvironmentVariable} is empty: put the password there or in Etcd:PasswordFile.")
            : password;
    }

    private static void ConfigureTls(SslClientAuthenticationOptions ssl, EtcdNameRegistryOptions options, IReadOnlyList<Uri> endpoints)
    {
        X509Certificate2Collection? roots = null;
        if (options.CaFile is { } caFile)
        {
            roots = [];
            roots.ImportFromPemFile(caFile);
        }

        // Calls are balanced over all members under one channel name, so the name TLS checks is
        // not the member's own: a certificate is accepted when it chains to the configured CA
        // (or the system's) and is issued to one of the configured endpoints.
        string[] hosts = [.. endpoints.Select(static u => u.IdnHost)];
        ssl.RemoteCertificateValidationCallback = (_, certificate, _, errors) => IsTrusted(certificate, errors, roots, hosts);
        if (options.ClientCertificateFile is { } certFile)
        {
            ssl.ClientCertificates = [X509Certificate2.CreateFromPemFile(certFile, options.ClientKeyFile)];
        }
    }

    private static bool IsTrusted(X509Certificate? certificate, SslPolicyErrors errors, X509Certificate2Collection? roots, string[] hosts)
    {
        if (certificate is not X509Certificate2 server || (errors & SslPolicyErrors.RemoteCertificateNotAvailable) != 0)
        {
            return false;
        }

        if (!hosts.Any(host => server.MatchesHostname(host)))
        {
            return false;
        }

        if (roots is null)
        {
            return (errors & SslPolicyErrors.RemoteCertificateChainErrors) == 0;
        }

        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.AddRange(roots);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        return chain.Build(server);
    }
}
