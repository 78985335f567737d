using CspNet.Tests.Alternation;

namespace CspNet.Tests.Regressions;

/// <summary>
/// A defect found in review: a <see cref="Thread.Interrupt"/> that arrives just after a partner has
/// committed a blocked read or selection must not lose the value. Either the interrupt wins
/// (nothing was taken, the writer is still waiting) or the value is returned and the interrupt
/// surfaces at the thread's next blocking call.
/// </summary>
/// <remarks>
/// Which of the two happens depends on scheduling, so each test repeats the race; the assertion
/// holds for every interleaving. The write is made from this thread while the reader is parked,
/// and the interrupt follows at once, so the reader usually wakes with both pending.
/// </remarks>
public class InterruptAfterCommitTests
{
    private const int Rounds = 200;
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(10);

    [Fact(Timeout = 60000)]
    public async Task Read_InterruptedRightAfterWriterHandedOver_ValueNeverLost() =>
        await RaceAsync(channel => channel.Read());

    [Fact(Timeout = 60000)]
    public async Task PriSelect_InterruptedRightAfterWriterCommitted_ValueNeverLost() =>
        await RaceAsync(channel =>
        {
            var alt = new Alternative(channel.In);
            Assert.Equal(0, alt.PriSelect());
            return channel.In.Read();
        });

    /// <summary>
    /// The interrupt lands exactly between the commit and the wake: the buffer's Put, which moves a
    /// parked party's value in after that party was claimed, interrupts it.
    /// </summary>
    [Fact(Timeout = 10000)]
    public async Task PriSelect_InterruptedBetweenCommitAndWake_ReturnsChoiceAndInterruptSurfacesLater()
    {
        var buffer = new InterruptingBuffer();
        var channel = new One2OneChannel<int>(buffer);
        channel.Write(1);
        var alt = new Alternative(channel.Out.Offer(2));
        var later = new ManualResetEventSlim();
        AltThread<(int Chosen, bool Interrupted)> selector = AltThread.Start(() =>
        {
            int chosen = alt.PriSelect();
            try
            {
                later.Wait(Patience);
                return (chosen, false);
            }
            catch (ThreadInterruptedException)
            {
                return (chosen, true);
            }
        });
        selector.WaitUntilBlockedOrEnded();
        buffer.OnPut = selector.Thread.Interrupt;

        Assert.Equal(1, channel.Read());
        (int chosen, bool interrupted) = await selector.Completion.WaitAsync(Patience);
        Assert.Equal(0, chosen);
        Assert.True(interrupted, "The interrupt was swallowed.");
        Assert.Equal(2, channel.Read());
    }

    /// <summary>As above for a blocked writer: its value went into the buffer, so Write must return.</summary>
    [Fact(Timeout = 10000)]
    public async Task Write_InterruptedBetweenHandOverAndWake_ReturnsAndInterruptSurfacesLater()
    {
        var buffer = new InterruptingBuffer();
        var channel = new One2OneChannel<int>(buffer);
        channel.Write(1);
        var later = new ManualResetEventSlim();
        AltThread<bool> writer = AltThread.Start(() =>
        {
            channel.Write(2);
            try
            {
                later.Wait(Patience);
                return false;
            }
            catch (ThreadInterruptedException)
            {
                return true;
            }
        });
        writer.WaitUntilBlockedOrEnded();
        buffer.OnPut = writer.Thread.Interrupt;

        Assert.Equal(1, channel.Read());
        Assert.True(await writer.Completion.WaitAsync(Patience), "The interrupt was swallowed.");
        Assert.Equal(2, channel.Read());
    }

    /// <summary>An interrupt before anyone claimed the parked read withdraws it: a later write is not taken by a dead read.</summary>
    [Fact(Timeout = 10000)]
    public async Task Read_InterruptedWhileParked_WithdrawnSoLaterWriteStaysAvailable()
    {
        var channel = new One2OneChannel<int>();
        AltThread<bool> reader = AltThread.Start(() =>
        {
            Thread.CurrentThread.Interrupt();
            try
            {
                channel.Read();
                return false;
            }
            catch (ThreadInterruptedException)
            {
                return true;
            }
        });
        Assert.True(await reader.Completion.WaitAsync(Patience));

        Task write = channel.WriteAsync(5).AsTask();
        Assert.False(write.IsCompleted, "The write was taken by a read that had been interrupted: the value is lost.");
        Assert.Equal(5, await channel.ReadAsync().AsTask().WaitAsync(Patience));
        await write.WaitAsync(Patience);
    }

    /// <summary>A one-slot FIFO that runs <see cref="OnPut"/> inside Put (under the channel lock, after the parked party was claimed).</summary>
    private sealed class InterruptingBuffer : IBuffer<int>
    {
        private readonly Queue<int> _items = new();

        public Action? OnPut { get; set; }

        public int Count => _items.Count;

        public bool IsFull => _items.Count >= 1;

        public void Put(int item)
        {
            OnPut?.Invoke();
            _items.Enqueue(item);
        }

        public int Take() => _items.Dequeue();
    }

    private static async Task RaceAsync(Func<One2OneChannel<int>, int> read)
    {
        int returned = 0;
        int interrupted = 0;
        for (int round = 0; round < Rounds; round++)
        {
            var channel = new One2OneChannel<int>();
            var secondBlockingCall = new ManualResetEventSlim();
            AltThread<(int Value, bool InterruptRaisedAgain)> reader = AltThread.Start(() =>
            {
                int value = read(channel);

                // The interrupt that arrived after the hand-over must surface here, not vanish.
                try
                {
                    secondBlockingCall.Wait(Patience);
                    return (value, false);
                }
                catch (ThreadInterruptedException)
                {
                    return (value, true);
                }
            });
            reader.WaitUntilBlockedOrEnded();

            Task write = channel.WriteAsync(round).AsTask();
            reader.Thread.Interrupt();

            try
            {
                (int value, bool raisedAgain) = await reader.Completion.WaitAsync(Patience);
                Assert.Equal(round, value);
                Assert.True(raisedAgain, "The interrupt that arrived after the value was taken was swallowed.");
                await write.WaitAsync(Patience);
                returned++;
            }
            catch (ThreadInterruptedException)
            {
                // The interrupt won: the value must still be in the channel, its writer waiting.
                Assert.False(write.IsCompleted, $"Round {round}: the read was interrupted but its writer completed: the value was lost.");
                Assert.Equal(round, await channel.ReadAsync().AsTask().WaitAsync(Patience));
                await write.WaitAsync(Patience);
                interrupted++;
            }
        }

        Assert.Equal(Rounds, returned + interrupted);
    }
}
