using CspNet.NameServer;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// Two CspNet programs in this process, each with its own gRPC endpoint on 127.0.0.1, and the
/// in-process NameServer they share: <see cref="Home"/> creates (hosts) the channels,
/// <see cref="Writer"/> attaches to them over its link.
/// </summary>
internal sealed class NamedPair : IAsyncDisposable
{
    private NamedPair(NameServerHost nameServer, CspNode home, CspNode writer)
    {
        NameServer = nameServer;
        Home = home;
        Writer = writer;
    }

    internal NameServerHost NameServer { get; }

    internal CspNode Home { get; }

    internal CspNode Writer { get; }

    internal static async Task<NamedPair> StartAsync()
    {
        NameServerHost nameServer = await NameServerHost.StartAsync();
        CspNode? home = null;
        try
        {
            home = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = "bench-home" });
            CspNode writer = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = "bench-writer" });
            return new NamedPair(nameServer, home, writer);
        }
        catch
        {
            if (home is not null)
            {
                await home.DisposeAsync();
            }

            await nameServer.DisposeAsync();
            throw;
        }
    }

    /// <summary>Reads <paramref name="input"/> until <paramref name="stop"/> is cancelled or the channel is poisoned.</summary>
    internal static async Task ReadForeverAsync(AltingChannelIn<byte[]> input, CancellationToken stop)
    {
        try
        {
            while (true)
            {
                _ = await input.ReadAsync(stop);
            }
        }
        catch (OperationCanceledException)
        {
        }
        catch (PoisonException)
        {
        }
    }

    public async ValueTask DisposeAsync()
    {
        await Writer.DisposeAsync();
        await Home.DisposeAsync();
        await NameServer.DisposeAsync();
    }
}
