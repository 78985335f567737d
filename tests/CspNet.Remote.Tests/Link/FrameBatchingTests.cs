using System.Threading.Channels;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;
using Google.Protobuf;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// The client side of FrameBatch: what is gathered into one message from the frames already
/// queued, in which order, and what always goes alone.
/// </summary>
public sealed class FrameBatchingTests
{
    [Fact]
    public void Gather_NothingQueuedBehind_ReturnsTheFrameAlone()
    {
        Channel<ClientFrame> queue = Queue();
        ClientFrame first = Write(1);

        Assert.Same(first, FrameBatching.Gather(first, queue.Reader));
    }

    [Fact]
    public void Gather_SmallFramesQueued_BatchesThemAllInOrderAndEmptiesTheQueue()
    {
        Channel<ClientFrame> queue = Queue(Write(2), new ClientFrame { Cancel = new Cancel { OpId = 9 } }, Write(3));

        ClientFrame sent = FrameBatching.Gather(Write(1), queue.Reader);

        Assert.Equal(ClientFrame.BodyOneofCase.Batch, sent.BodyCase);
        Assert.Equal([1UL, 2UL, 9UL, 3UL], sent.Batch.Frames.Select(f => f.Write?.OpId ?? f.Cancel.OpId));
        Assert.False(queue.Reader.TryPeek(out _));
        Assert.Equal(3, FrameBatching.CreditedWrites(sent));
    }

    [Fact]
    public void Gather_LargeFrameQueued_StopsBeforeItAndLeavesItQueued()
    {
        ClientFrame large = Write(3, FrameBatching.MaxFrameBytes + 1);
        Channel<ClientFrame> queue = Queue(Write(2), large, Write(4));

        ClientFrame sent = FrameBatching.Gather(Write(1), queue.Reader);

        Assert.Equal([1UL, 2UL], sent.Batch.Frames.Select(f => f.Write.OpId));
        Assert.True(queue.Reader.TryRead(out ClientFrame? next));
        Assert.Same(large, next);
        Assert.Same(large, FrameBatching.Gather(large, Queue(Write(5)).Reader)); // a large frame never opens a batch either
    }

    [Fact]
    public void Gather_ManyQueued_StopsAtTheFrameAndByteLimits()
    {
        var frames = Enumerable.Range(2, 200).Select(i => Write((ulong)i)).ToArray();
        Channel<ClientFrame> queue = Queue(frames);
        ClientFrame byCount = FrameBatching.Gather(Write(1), queue.Reader);
        Assert.Equal(FrameBatching.MaxFrames, byCount.Batch.Frames.Count);

        Channel<ClientFrame> big = Queue(Enumerable.Range(2, 200).Select(i => Write((ulong)i, 1500)).ToArray());
        ClientFrame bySize = FrameBatching.Gather(Write(1, 1500), big.Reader);
        int bytes = bySize.Batch.Frames.Sum(f => f.CalculateSize());
        Assert.InRange(bytes, FrameBatching.MaxBytes - 1600, FrameBatching.MaxBytes);
        Assert.True(big.Reader.TryPeek(out _));
    }

    [Fact]
    public void Gather_HelloQueued_NeverBatchesIt()
    {
        var hello = new ClientFrame { Hello = new Hello { ProtocolVersion = 1 } };
        Assert.Same(hello, FrameBatching.Gather(hello, Queue(Write(1)).Reader));

        ClientFrame sent = FrameBatching.Gather(Write(1), Queue(hello).Reader);
        Assert.Equal(ClientFrame.BodyOneofCase.Write, sent.BodyCase);
    }

    [Fact]
    public void CreditedWrites_PlainAndCreditedFrames_CountsOnlyCreditedWrites()
    {
        Assert.Equal(0, FrameBatching.CreditedWrites(new ClientFrame { Write = new Write { OpId = 1 } }));
        Assert.Equal(1, FrameBatching.CreditedWrites(Write(1)));
        var batch = new ClientFrame { Batch = new FrameBatch { Frames = { Write(1), new ClientFrame { Write = new Write { OpId = 2 } }, new ClientFrame { Read = new Read() }, Write(3) } } };
        Assert.Equal(2, FrameBatching.CreditedWrites(batch));
    }

    private static ClientFrame Write(ulong opId, int size = 1) =>
        new() { Write = new Write { Handle = 1, OpId = opId, Data = ByteString.CopyFrom(new byte[size]), Credited = true } };

    private static Channel<ClientFrame> Queue(params ClientFrame[] frames)
    {
        Channel<ClientFrame> queue = Channel.CreateUnbounded<ClientFrame>(new UnboundedChannelOptions { SingleReader = true });
        foreach (ClientFrame frame in frames)
        {
            Assert.True(queue.Writer.TryWrite(frame));
        }

        return queue;
    }
}
