using System;
using System.Collections.Concurrent;
using Grpc.Net.Client;

namespace CspNet.Remote.Internal.Workers;

/// <summary>A node's gRPC channels to worker pools, one per pool address, kept between DistParallel runs.</summary>
/// <remarks>
/// A new channel per run would pay a TCP connection and an HTTP/2 (and TLS) handshake in every
/// dispatch; a kept channel reconnects by itself when a pool restarts on the same address.
/// </remarks>
internal sealed class PoolChannels(CspNodeOptions options) : IDisposable
{
    private readonly ConcurrentDictionary<Uri, Lazy<GrpcChannel>> _channels = new();

    internal CspNodeOptions Options => options;

    /// <summary>The channel to <paramref name="address"/> (from <see cref="PoolConnection.DialAddress"/>).</summary>
    internal GrpcChannel Get(Uri address) =>
        _channels.GetOrAdd(address, static (address, options) => new Lazy<GrpcChannel>(() => PoolConnection.CreateChannel(address, options)), options).Value;

    public void Dispose()
    {
        foreach (Lazy<GrpcChannel> channel in _channels.Values)
        {
            if (channel.IsValueCreated)
            {
                channel.Value.Dispose();
            }
        }

        _channels.Clear();
    }
}
