using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Transport;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// The links of this program to others, one per peer endpoint, opened on first use and shared by
/// every end homed there. A link found broken is replaced on the next getter, so a peer that
/// restarted can be used again through new ends (the old ends stay failed: their construct died).
/// </summary>
internal sealed class PeerLinks(ILinkNode runtime) : IAsyncDisposable
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, Task<PeerLink>> _links = new(StringComparer.OrdinalIgnoreCase);
    private bool _disposed;

    internal async Task<PeerLink> GetAsync(string host, int port, CancellationToken cancellationToken)
    {
        string key = $"{host}:{port}";
        Task<PeerLink> connecting;
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
#pragma warning disable RS0030 // Read only when IsCompletedSuccessfully.
            if (!_links.TryGetValue(key, out connecting!) || connecting.IsFaulted || connecting.IsCanceled || (connecting.IsCompletedSuccessfully && connecting.Result.IsFailed))
#pragma warning restore RS0030
            {
                // Connecting is not tied to the first caller's token: the link outlives that getter.
                connecting = PeerLink.ConnectAsync(runtime, host, port, CancellationToken.None);
                _links[key] = connecting;
            }
        }

        return await connecting.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        Task<PeerLink>[] links;
        lock (_lock)
        {
            _disposed = true;
            links = [.. _links.Values];
            _links.Clear();
        }

        foreach (Task<PeerLink> connecting in links)
        {
            try
            {
                await (await connecting.ConfigureAwait(false)).DisposeAsync().ConfigureAwait(false);
            }
#pragma warning disable CA1031 // A link that never opened has nothing to close.
            catch (Exception)
#pragma warning restore CA1031
            {
            }
        }
    }
}
