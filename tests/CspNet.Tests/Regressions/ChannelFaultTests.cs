namespace CspNet.Tests.Regressions;

/// <summary>
/// A defect found in review: user code that throws (a custom buffer) surfaces at the caller and leaves
/// the channel usable: no party stays parked, no value is lost.
/// </summary>
public class ChannelFaultTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(5);

    [Fact(Timeout = 10000)]
    public async Task Read_BufferRefusesParkedWritersValue_ReaderGetsItsValueAndWriterTheException()
    {
        var buffer = new PickyBuffer(capacity: 1, refused: 13);
        var channel = new One2OneChannel<int>(buffer);
        channel.Write(1);
        ValueTask parked = channel.WriteAsync(13);
        Assert.False(parked.IsCompleted);

        Assert.Equal(1, await channel.ReadAsync().AsTask().WaitAsync(Patience));
        var error = await Assert.ThrowsAsync<InvalidDataException>(() => parked.AsTask().WaitAsync(Patience));
        Assert.Contains("13", error.Message, StringComparison.Ordinal);

        // Still usable.
        await channel.WriteAsync(2).AsTask().WaitAsync(Patience);
        Assert.Equal(2, channel.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task Write_BufferPutThrows_WriterGetsExceptionAndChannelStaysUsable()
    {
        var channel = new Any2OneChannel<int>(new PickyBuffer(capacity: 2, refused: 13));
        Assert.Throws<InvalidDataException>(() => channel.Write(13));
        await Assert.ThrowsAsync<InvalidDataException>(async () => await channel.WriteAsync(13));

        channel.Write(3);
        Assert.Equal(3, channel.Read());
    }

    [Fact(Timeout = 10000)]
    public async Task Select_OfferRefusedByBuffer_SelectThrowsAndOfferStays()
    {
        var channel = new One2OneChannel<int>(new PickyBuffer(capacity: 1, refused: 13));
        AltingChannelOut<int> output = channel.Out;
        var alt = new Alternative(output.Offer(13));
        Assert.Throws<InvalidDataException>(() => alt.PriSelect());

        output.Offer(4);
        Assert.Equal(0, alt.PriSelect());
        Assert.Equal(4, await channel.ReadAsync().AsTask().WaitAsync(Patience));
    }

    [Fact(Timeout = 10000)]
    public async Task Read_BufferTakeThrowsOnce_ReaderGetsExceptionThenTheValue()
    {
        var buffer = new PickyBuffer(capacity: 1, refused: -1) { FailNextTake = true };
        var channel = new One2OneChannel<int>(buffer);
        channel.Write(5);

        await Assert.ThrowsAsync<InvalidDataException>(async () => await channel.ReadAsync());
        Assert.Equal(5, await channel.ReadAsync().AsTask().WaitAsync(Patience));
    }

    /// <summary>A FIFO buffer that refuses one value (and can fail one take), as a faulty custom buffer would.</summary>
    private sealed class PickyBuffer(int capacity, int refused) : IBuffer<int>
    {
        private readonly Queue<int> _items = new();

        public bool FailNextTake { get; set; }

        public int Count => _items.Count;

        public bool IsFull => _items.Count >= capacity;

        public void Put(int item)
        {
            if (item == refused)
            {
                throw new InvalidDataException($"This buffer refuses {item}.");
            }

            _items.Enqueue(item);
        }

        public int Take()
        {
            if (FailNextTake)
            {
                FailNextTake = false;
                throw new InvalidDataException("Take failed once.");
            }

            return _items.Dequeue();
        }
    }
}
