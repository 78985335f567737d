using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// Values large enough to be received into pooled arrays (see LinkMarshaller), in chunks and in
/// one frame, through every path that receives one: a remote write at the home, a remote read's
/// answer and a remote selecting reader's reservation at the client. Each value is checked byte for
/// byte, round after round, so an array returned to the pool while still in use (and refilled by
/// the next frame) would show as a corrupt value.
/// </summary>
public sealed class LargeValueTests
{
    private const int ChunkSize = 64 << 10;

    // One pooled frame; a full chunk and a one-byte Write; several chunks and a pooled last part.
    private static readonly int[] Sizes = [20_000, ChunkSize, 300_000];

    [Fact(Timeout = 60_000)]
    public async Task LargeValues_WrittenReadAndSelectedAcrossALink_ArriveIntact()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode host = await system.NodeAsync("host", o => o.ChunkSize = ChunkSize);
        CspNode user = await system.NodeAsync("user", o => o.ChunkSize = ChunkSize);
        AltingChannelIn<byte[]> hostIn = await host.GetOne2OneInAsync<byte[]>("to-host");
        IChannelOut<byte[]> userOut = await user.GetOne2OneOutAsync<byte[]>("to-host");
        IChannelOut<byte[]> hostOut = await host.GetOne2AnyOutAsync<byte[]>("to-user");
        AltingChannelIn<byte[]> userIn = await user.GetOne2AnyInAsync<byte[]>("to-user");
        var select = new Alternative([userIn]);
        var random = new Random(7);

        for (int round = 0; round < 4; round++)
        {
            foreach (int size in Sizes)
            {
                byte[] value = new byte[size];
                random.NextBytes(value);

                Task write = userOut.WriteAsync(value).AsTask();
                Assert.Equal(value, await hostIn.ReadAsync());
                await write;

                write = hostOut.WriteAsync(value).AsTask();
                Assert.Equal(value, await userIn.ReadAsync());
                await write;

                write = hostOut.WriteAsync(value).AsTask();
                Assert.Equal(0, await select.PriSelectAsync());
                Assert.Equal(value, await userIn.ReadAsync());
                await write;
            }
        }
    }
}
