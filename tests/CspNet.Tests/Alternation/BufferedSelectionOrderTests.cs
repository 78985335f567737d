using CspNet.Tests.Channels;

namespace CspNet.Tests.Alternation;

/// <summary>
/// A single writer's values leave a buffered channel in the order written, whatever mix of
/// offered output guards, selecting readers, thread and async processes touches it. A value put
/// in the buffer by one party must never be overtaken by a later value handed straight to a
/// reader whose selection is still parked beside that buffer.
/// </summary>
[Collection(ChannelStressGroup.Name)]
public sealed class BufferedSelectionOrderTests
{
    private const int TimeoutMilliseconds = 120_000;

    /// <summary>
    /// The smallest trigger: a writer offering each value in a fair selection beside an idle
    /// input, and a reader selecting fairly over an idle input and the channel, then reading.
    /// </summary>
    [Theory(Timeout = TimeoutMilliseconds)]
    [InlineData(ChannelKind.One2One, 1, false, false)]
    [InlineData(ChannelKind.One2One, 1, false, true)]
    [InlineData(ChannelKind.One2One, 1, true, false)]
    [InlineData(ChannelKind.One2One, 1, true, true)]
    [InlineData(ChannelKind.One2One, 2, false, false)]
    [InlineData(ChannelKind.Any2One, 1, false, false)]
    [InlineData(ChannelKind.One2Any, 1, false, false)]
    [InlineData(ChannelKind.Any2Any, 16, false, false)]
    public async Task FairSelect_OfferingWriterSelectingReader_ValuesArriveInOrder(ChannelKind kind, int capacity, bool writerAsync, bool readerAsync)
    {
        var exchange = new OrderedExchange(
            TestChannels.Create(kind, new FifoBuffer<int>(capacity)), [writerAsync], [readerAsync], 150_000, WriteStyles.Offer, ReadStyles.Select, seed: 1);

        await exchange.RunAsync();

        Assert.Null(exchange.Failure());
    }
}
