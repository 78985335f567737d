using CspNet.Remote.Tests.Lane;
using Google.Protobuf;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// How many credits a remote writing end gets (docs/DISTRIBUTED.md, Buffered named channels): the
/// room of a buffer the user sized, up to 256 values (a link's worth of 64 KB values), and 64 for a
/// buffer that never fills.
/// </summary>
public sealed class CreditWindowTests
{
    public static TheoryData<string, int, long> Buffers => new()
    {
        { "fifo", 8, 7 },
        { "fifo", 200, 199 },
        { "fifo", 1_000, 256 },
        { "infinite", 0, 64 },
        { "overwrite", 1_000, 64 },
    };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Buffers))]
    public async Task Credits_FirstWriteToABuffer_GrantedUpToTheWindow(string buffer, int slots, long expected)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        IBuffer<byte[]> chosen = buffer switch
        {
            "fifo" => new FifoBuffer<byte[]>(slots),
            "infinite" => new InfiniteBuffer<byte[]>(),
            _ => new OverwriteOldestBuffer<byte[]>(slots),
        };
        AltingChannelIn<byte[]> input = await home.GetAny2OneInAsync("window", chosen);
        await using var client = await BulkLaneTests.RawClient.StartAsync(home, offerLane: false, writeCredits: true);
        await client.AttachWriterAsync("window");

        // The first write holds one slot (nobody reads); the credits for the rest come before its answer.
        await client.SendAsync(new Proto.ClientFrame { Write = new Proto.Write { Handle = 1, OpId = 1, Data = ByteString.CopyFrom([1, 7]) } });
        long credits = 0;
        while (true)
        {
            Proto.HomeFrame frame = await client.NextAsync();
            credits += frame.Credit is { Handle: 1 } credit ? credit.Count : 0;
            if (frame.Completed is { OpId: 1 } completed)
            {
                Assert.Equal(Proto.Outcome.Ok, completed.Outcome);
                break;
            }
        }

        Assert.Equal(expected, credits);
        Assert.Equal([7], await input.ReadAsync());
    }
}
