using CspNet.Tests.Alternation.Contract;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>PriSelectAsync, FairSelectAsync and SelectAsync, and their cancellation.</summary>
public class AsyncSelectTests
{
    public enum SelectMethod
    {
        Pri,
        Fair,
        Any,
    }

    private static ValueTask<int> SelectAsync(Alternative alt, SelectMethod method, CancellationToken ct) => method switch
    {
        SelectMethod.Pri => alt.PriSelectAsync(ct),
        SelectMethod.Fair => alt.FairSelectAsync(ct),
        _ => alt.SelectAsync(ct),
    };

    private static ValueTask<int> SelectAsync(Alternative alt, SelectMethod method, bool[] pre, CancellationToken ct) => method switch
    {
        SelectMethod.Pri => alt.PriSelectAsync(pre, ct),
        SelectMethod.Fair => alt.FairSelectAsync(pre, ct),
        _ => alt.SelectAsync(pre, ct),
    };

    [Theory(Timeout = 10000)]
    [InlineData(SelectMethod.Pri)]
    [InlineData(SelectMethod.Fair)]
    [InlineData(SelectMethod.Any)]
    public Task SelectAsync_CancelledWhileWaiting_ThrowsAndLaterValueStillAvailable(SelectMethod method)
    {
        TestSource channel = TestSource.Local(AltKind.One2One);
        TestSource other = TestSource.Local(AltKind.One2One, 1);
        return CancelledWhileWaitingScenario(method, channel, channel.CreateEnd(), other, other.CreateEnd());
    }

    /// <summary>
    /// A select over <paramref name="end"/>, <paramref name="otherEnd"/> and a timer without timeout
    /// is cancelled while it waits: it throws, and has taken and holds nothing, so the next values
    /// go to the next reads. <paramref name="other"/> is buffered.
    /// </summary>
    internal static async Task CancelledWhileWaitingScenario(SelectMethod method, TestSource source, InputEnd end, TestSource other, InputEnd otherEnd)
    {
        var alt = new Alternative(end.Guard, otherEnd.Guard, new CSTimer());
        using var cts = new CancellationTokenSource();

        ValueTask<int> select = SelectAsync(alt, method, cts.Token);
        Assert.False(select.IsCompleted);
        await cts.CancelAsync();
        OperationCanceledException e = await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await select);
        Assert.Equal(cts.Token, e.CancellationToken);

        // The cancelled select took nothing and holds nothing: the next values go to the next reads.
        ValueTask write = source.WriteAsync(5);
        Assert.False(write.IsCompleted, "Nobody has taken the value yet.");
        await other.WriteAsync(6);
        Assert.Equal(6, await otherEnd.In.ReadAsync());
        Assert.Equal(0, await SelectAsync(alt, method, CancellationToken.None));
        Assert.Equal(5, end.In.Read());
        await write;
    }

    [Theory(Timeout = 10000)]
    [InlineData(SelectMethod.Pri)]
    [InlineData(SelectMethod.Fair)]
    [InlineData(SelectMethod.Any)]
    public async Task SelectAsync_TokenAlreadyCancelledAndGuardReady_ThrowsAndConsumesNothing(SelectMethod method)
    {
        var channel = new One2OneChannel<int>();
        ValueTask write = channel.WriteAsync(9);
        var alt = new Alternative(channel.In);

        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await SelectAsync(alt, method, new CancellationToken(true)));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await SelectAsync(alt, method, [true], new CancellationToken(true)));
        Assert.False(write.IsCompleted, "The value was not taken.");
        Assert.Equal(9, await channel.ReadAsync());
        await write;
    }

    [Theory(Timeout = 10000)]
    [InlineData(SelectMethod.Pri)]
    [InlineData(SelectMethod.Fair)]
    [InlineData(SelectMethod.Any)]
    public async Task SelectAsync_CancelledWithOffersParked_WithdrawsThem(SelectMethod method)
    {
        var a = new One2OneChannel<int>();
        var b = new Any2AnyChannel<int>();
        var alt = new Alternative(a.Out.Offer(1), b.CreateOut().Offer(2));
        using var cts = new CancellationTokenSource();

        ValueTask<int> select = SelectAsync(alt, method, cts.Token);
        Assert.False(select.IsCompleted);
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await select);

        ValueTask<int> readA = a.ReadAsync();
        ValueTask<int> readB = b.ReadAsync();
        Assert.False(readA.IsCompleted || readB.IsCompleted, "A cancelled select delivered nothing.");
        await a.WriteAsync(3);
        await b.WriteAsync(4);
        Assert.Equal(3, await readA);
        Assert.Equal(4, await readB);
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_CancelledAfterCompletion_NoEffectAndReusable()
    {
        var channel = new One2OneChannel<int>();
        var alt = new Alternative(channel.In);
        using var cts = new CancellationTokenSource();

        ValueTask<int> select = alt.PriSelectAsync(cts.Token);
        ValueTask write = channel.WriteAsync(1);
        Assert.Equal(0, await select);
        await cts.CancelAsync();
        Assert.Equal(1, channel.In.Read());
        await write;

        for (int n = 0; n < 100; n++)
        {
            using var each = new CancellationTokenSource();
            ValueTask<int> s = alt.PriSelectAsync(each.Token);
            if (n % 2 == 0)
            {
                await each.CancelAsync();
                await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await s);
            }
            else
            {
                ValueTask w = channel.WriteAsync(n);
                Assert.Equal(0, await s);
                Assert.Equal(n, channel.In.Read());
                await w;
            }
        }
    }

    [Fact(Timeout = 10000)]
    public async Task PriSelectAsync_CancelledBeforeTimerFires_ThrowsOperationCanceled()
    {
        var timer = new CSTimer();
        var alt = new Alternative(timer);
        timer.RelativeTimeOut(60000);
        using var cts = new CancellationTokenSource();

        ValueTask<int> select = alt.PriSelectAsync(cts.Token);
        Assert.False(select.IsCompleted);
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await select);

        timer.RelativeTimeOut(5);
        Assert.Equal(0, await alt.PriSelectAsync(CancellationToken.None));
    }

    [Fact(Timeout = 10000)]
    public async Task SelectAsync_NoCancellation_HoldsNoThreadWhileWaiting()
    {
        // Many async selects parked at once on a 2-core machine: none holds a thread.
        const int count = 2000;
        var channels = new One2OneChannel<int>[count];
        var selects = new Task<int>[count];
        for (int i = 0; i < count; i++)
        {
            channels[i] = new One2OneChannel<int>();
            var alt = new Alternative(new CSTimer(), channels[i].In);
            selects[i] = alt.FairSelectAsync().AsTask();
        }

        Assert.DoesNotContain(selects, s => s.IsCompleted);
        for (int i = 0; i < count; i++)
        {
            await channels[i].Out.WriteAsync(i);
        }

        int[] chosen = await Task.WhenAll(selects);
        Assert.All(chosen, i => Assert.Equal(1, i));
        for (int i = 0; i < count; i++)
        {
            Assert.Equal(i, channels[i].In.Read());
        }
    }

    public static TheoryData<AltKind, int> CancellationRaceCases() => AltData.KindsAndCapacities();

    /// <summary>
    /// Cancellation racing with writes: writers cancel the reader's current select token right
    /// before (or after) writing, so cancellation and commit race on every few items. Async
    /// writers also cancel their own writes at random and retry the same item. Every item must
    /// be read exactly once, and cancellations must actually have happened.
    /// </summary>
    [Theory(Timeout = 60000)]
    [MemberData(nameof(CancellationRaceCases))]
    public Task SelectAsync_CancellationRacingWithWrites_NothingLostOrDuplicated(AltKind kind, int capacity) =>
        CancellationRaceScenario(
            TestSource.Local(kind, capacity),
            TestSource.Local(kind, capacity),
            writers: AltChannels.SharedWriter(kind) ? 4 : 2,
            readers: AltChannels.SharedReader(kind) ? 2 : 1,
            itemsPerWriter: 15000);

    /// <summary>The race above over any two sources: writers alternate between them; each reader selects over its own ends of both.</summary>
    internal static async Task CancellationRaceScenario(TestSource a, TestSource b, int writers, int readers, int itemsPerWriter)
    {
        var counter = new ItemCounter(writers * itemsPerWriter);
        var readerTokens = new CancellationTokenSource?[readers];
        long cancelledSelects = 0;
        long cancelledWrites = 0;
        int writersLeft = writers;
        var par = new Parallel();

        for (int w = 0; w < writers; w++)
        {
            TestSource target = w % 2 == 0 ? a : b;
            int first = w * itemsPerWriter;
            var random = new Random(w);
            void CancelSomeReader()
            {
                if (random.Next(3) == 0)
                {
                    Volatile.Read(ref readerTokens[random.Next(readers)])?.Cancel();
                }
            }

            void Done()
            {
                if (Interlocked.Decrement(ref writersLeft) == 0)
                {
                    a.Poison();
                    b.Poison();
                }
            }

            if (w % 4 < 2)
            {
                par.AddProcess(() =>
                {
                    for (int v = first; v < first + itemsPerWriter; v++)
                    {
                        CancelSomeReader();
                        target.Write(v);
                        CancelSomeReader();
                    }

                    Done();
                });
            }
            else
            {
                par.AddProcess(async ct =>
                {
                    for (int v = first; v < first + itemsPerWriter; v++)
                    {
                        CancelSomeReader();
                        while (true)
                        {
                            var cts = new CancellationTokenSource();
                            ValueTask write = target.WriteAsync(v, cts.Token);
                            if (random.Next(8) == 0)
                            {
                                cts.Cancel();
                            }

                            try
                            {
                                await write;
                                break;
                            }
                            catch (OperationCanceledException)
                            {
                                Interlocked.Increment(ref cancelledWrites);
                            }
                        }
                    }

                    Done();
                });
            }
        }

        for (int r = 0; r < readers; r++)
        {
            int me = r;
            InputEnd x = a.CreateEnd();
            InputEnd y = b.CreateEnd();
            IChannelIn<int>[] ins = [x.In, y.In];
            var alt = new Alternative(x.Guard, y.Guard);
            bool[] open = [true, true];
            par.AddProcess(async _ =>
            {
                int n = 0;
                while (open[0] || open[1])
                {
                    var cts = new CancellationTokenSource();
                    Volatile.Write(ref readerTokens[me], cts);
                    int i;
                    try
                    {
                        i = n++ % 2 == 0 ? await alt.PriSelectAsync(open, cts.Token) : await alt.FairSelectAsync(open, cts.Token);
                    }
                    catch (OperationCanceledException)
                    {
                        Interlocked.Increment(ref cancelledSelects);
                        continue;
                    }

                    try
                    {
                        counter.Count(ins[i].Read());
                    }
                    catch (PoisonException)
                    {
                        open[i] = false;
                    }
                }
            });
        }

        await par.RunAsync();
        counter.AssertEachExactlyOnce();
        Assert.True(Interlocked.Read(ref cancelledSelects) > 0, "No select was cancelled: the race was not exercised.");
    }
}
