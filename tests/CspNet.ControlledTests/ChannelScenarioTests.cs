using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using Xunit.Abstractions;

namespace CspNet.ControlledTests;

/// <summary>
/// The real engine's core scenarios under the controlled scheduler (<see cref="Explorer"/>):
/// rendezvous, buffered FIFO with offers and selections, selections over input and output guards,
/// with thread and async parties mixed.
/// </summary>
public class ChannelScenarioTests(ITestOutputHelper output)
{
    private const int Values = 3;

    /// <summary>Thread (T) or async (A) writer and reader.</summary>
    public static TheoryData<string> Kinds => new() { "TT", "TA", "AT", "AA" };

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Rendezvous_OneWriterOneReader_EveryValueOnceInOrder(string kinds) =>
        Explorer.Explore(output, $"{nameof(Rendezvous_OneWriterOneReader_EveryValueOnceInOrder)}({kinds})", s =>
        {
            var channel = new One2OneChannel<int>();
            var seen = new List<int>();
            AddWriter(s, "writer", kinds[0] == 'A', channel.Out, 0, Values);
            AddReader(s, "reader", kinds[1] == 'A', channel.In, seen, Values);
            s.Check(() => Assert.Equal(Enumerable.Range(0, Values), seen));
        });

    [Fact]
    public void Rendezvous_TwoWritersTwoReadersMixed_EveryValueOnceInWriterOrder() =>
        Explorer.Explore(output, nameof(Rendezvous_TwoWritersTwoReadersMixed_EveryValueOnceInWriterOrder), s =>
        {
            var channel = new Any2AnyChannel<int>();
            var seenByThread = new List<int>();
            var seenByAsync = new List<int>();
            AddWriter(s, "thread writer", false, channel.CreateOut(), 0, 2);
            AddWriter(s, "async writer", true, channel.CreateOut(), 100, 2);
            AddReader(s, "thread reader", false, channel.CreateIn(), seenByThread, 2);
            AddReader(s, "async reader", true, channel.CreateIn(), seenByAsync, 2);
            s.Check(() =>
            {
                Checks.WriterOrder(seenByThread, "the thread reader");
                Checks.WriterOrder(seenByAsync, "the async reader");
                Checks.ExactlyOnce(seenByThread.Concat(seenByAsync), [0, 1, 100, 101]);
            });
        });

    /// <summary>
    /// The smallest trigger of the buffered FIFO defect: a writer that offers and selects over its
    /// output and an idle input, a reader that selects over an idle input and its input, then reads.
    /// </summary>
    [Theory]
    [InlineData(1, "TT")]
    [InlineData(1, "TA")]
    [InlineData(1, "AT")]
    [InlineData(2, "TT")]
    [InlineData(2, "AA")]
    public void BufferedFifo_OfferingWriterSelectingReader_ValuesInWrittenOrder(int capacity, string kinds) =>
        Explorer.Explore(output, $"{nameof(BufferedFifo_OfferingWriterSelectingReader_ValuesInWrittenOrder)}({capacity},{kinds})", s =>
        {
            const int count = 4;
            var channel = new One2OneChannel<int>(new FifoBuffer<int>(capacity));
            var idleForWriter = new One2OneChannel<int>();
            var idleForReader = new One2OneChannel<int>();
            var seen = new List<int>();
            var writerSelection = new Alternative(channel.Out, idleForWriter.In);
            var readerSelection = new Alternative(idleForReader.In, channel.In);
            if (kinds[0] == 'T')
            {
                s.Thread("writer", () =>
                {
                    for (int k = 0; k < count; k++)
                    {
                        channel.Out.Offer(k);
                        Assert.Equal(0, writerSelection.FairSelect());
                    }
                });
            }
            else
            {
                s.Async("writer", async () =>
                {
                    for (int k = 0; k < count; k++)
                    {
                        channel.Out.Offer(k);
                        Assert.Equal(0, await writerSelection.FairSelectAsync());
                    }
                });
            }

            if (kinds[1] == 'T')
            {
                s.Thread("reader", () =>
                {
                    for (int k = 0; k < count; k++)
                    {
                        Assert.Equal(1, readerSelection.FairSelect());
                        seen.Add(channel.In.Read());
                    }
                });
            }
            else
            {
                s.Async("reader", async () =>
                {
                    for (int k = 0; k < count; k++)
                    {
                        Assert.Equal(1, await readerSelection.FairSelectAsync());
                        seen.Add(await channel.In.ReadAsync());
                    }
                });
            }

            s.Check(() => Assert.True(seen.SequenceEqual(Enumerable.Range(0, count)), $"The reader saw [{string.Join(",", seen)}]: not the written order."));
        });

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void BufferedFifo_TwoWritersOneSelectingReader_EveryValueOnceInWriterOrder(int capacity) =>
        Explorer.Explore(output, $"{nameof(BufferedFifo_TwoWritersOneSelectingReader_EveryValueOnceInWriterOrder)}({capacity})", s =>
        {
            var channel = new Any2OneChannel<int>(new FifoBuffer<int>(capacity));
            var idle = new One2OneChannel<int>();
            var seen = new List<int>();
            var selection = new Alternative(channel.In, idle.In);
            AddWriter(s, "thread writer", false, channel.CreateOut(), 0, 2);
            AddWriter(s, "async writer", true, channel.CreateOut(), 100, 2);
            s.Async("reader", async () =>
            {
                for (int k = 0; k < 4; k++)
                {
                    Assert.Equal(0, await selection.PriSelectAsync());
                    seen.Add(await channel.In.ReadAsync());
                }
            });
            s.Check(() =>
            {
                Checks.WriterOrder(seen, "the reader");
                Checks.ExactlyOnce(seen, [0, 1, 100, 101]);
            });
        });

    /// <summary>A selection over two inputs takes one value; the losing guard's writer is still waiting, and its value is read after.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Selection_TwoInputGuards_LosingGuardConsumesNothing(bool asyncSelector) =>
        Explorer.Explore(output, $"{nameof(Selection_TwoInputGuards_LosingGuardConsumesNothing)}({asyncSelector})", s =>
        {
            var first = new One2OneChannel<int>();
            var second = new One2OneChannel<int>();
            var selection = new Alternative(first.In, second.In);
            var seen = new List<int>();
            AddWriter(s, "first writer", false, first.Out, 10, 1);
            AddWriter(s, "second writer", true, second.Out, 20, 1);
            if (asyncSelector)
            {
                s.Async("selector", async () =>
                {
                    int chosen = await selection.FairSelectAsync();
                    seen.Add(await (chosen == 0 ? first.In : second.In).ReadAsync());
                    seen.Add(await (chosen == 0 ? second.In : first.In).ReadAsync());
                });
            }
            else
            {
                s.Thread("selector", () =>
                {
                    int chosen = selection.FairSelect();
                    seen.Add((chosen == 0 ? first.In : second.In).Read());
                    seen.Add((chosen == 0 ? second.In : first.In).Read());
                });
            }

            s.Check(() => Checks.ExactlyOnce(seen, [10, 20]));
        });

    /// <summary>A selection over two offered outputs delivers one value; the losing offer delivers nothing, and a plain write follows on that channel.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Selection_TwoOutputGuards_LosingOfferDeliversNothing(bool asyncSelector) =>
        Explorer.Explore(output, $"{nameof(Selection_TwoOutputGuards_LosingOfferDeliversNothing)}({asyncSelector})", s =>
        {
            var first = new One2OneChannel<int>();
            var second = new One2OneChannel<int>();
            var selection = new Alternative(first.Out, second.Out);
            var seenFirst = new List<int>();
            var seenSecond = new List<int>();
            AddReader(s, "first reader", false, first.In, seenFirst, 1);
            AddReader(s, "second reader", true, second.In, seenSecond, 1);
            if (asyncSelector)
            {
                s.Async("selector", async () =>
                {
                    first.Out.Offer(10);
                    second.Out.Offer(20);
                    int chosen = await selection.FairSelectAsync();
                    await (chosen == 0 ? second.Out : first.Out).WriteAsync(99);
                });
            }
            else
            {
                s.Thread("selector", () =>
                {
                    first.Out.Offer(10);
                    second.Out.Offer(20);
                    int chosen = selection.FairSelect();
                    (chosen == 0 ? second.Out : first.Out).Write(99);
                });
            }

            s.Check(() =>
            {
                int[] got = [seenFirst.Single(), seenSecond.Single()];
                Assert.True(got.SequenceEqual([10, 99]) || got.SequenceEqual([99, 20]), $"The readers got [{string.Join(",", got)}]: a losing offer delivered, or the winner's value was lost.");
            });
        });

    /// <summary>A poller selects over its input and a Skip a few times before it waits: a Skip that wins takes nothing.</summary>
    [Fact]
    public void Selection_InputBesideSkip_SkipTakesNothing() =>
        Explorer.Explore(output, nameof(Selection_InputBesideSkip_SkipTakesNothing), s =>
        {
            var channel = new One2OneChannel<int>(new FifoBuffer<int>(1));
            var polling = new Alternative(channel.In, new Skip());
            var seen = new List<int>();
            AddWriter(s, "writer", true, channel.Out, 0, Values);
            s.Thread("poller", () =>
            {
                int polls = 0;
                while (seen.Count < Values)
                {
                    // Polls at most twice in a row, then reads: a poller that never parks would
                    // starve the others under a priority schedule.
                    if (polls++ < 2 && polling.PriSelect() == 1)
                    {
                        continue;
                    }

                    polls = 0;
                    seen.Add(channel.In.Read());
                }
            });
            s.Check(() => Assert.Equal(Enumerable.Range(0, Values), seen));
        });

    internal static void AddWriter(Scenario s, string name, bool isAsync, IChannelOut<int> output, int first, int count)
    {
        if (isAsync)
        {
            s.Async(name, async () =>
            {
                for (int i = 0; i < count; i++)
                {
                    await output.WriteAsync(first + i);
                }
            });
        }
        else
        {
            s.Thread(name, () =>
            {
                for (int i = 0; i < count; i++)
                {
                    output.Write(first + i);
                }
            });
        }
    }

    internal static void AddReader(Scenario s, string name, bool isAsync, IChannelIn<int> input, List<int> seen, int count)
    {
        if (isAsync)
        {
            s.Async(name, async () =>
            {
                for (int i = 0; i < count; i++)
                {
                    seen.Add(await input.ReadAsync());
                }
            });
        }
        else
        {
            s.Thread(name, () =>
            {
                for (int i = 0; i < count; i++)
                {
                    seen.Add(input.Read());
                }
            });
        }
    }
}

/// <summary>The properties the scenarios check.</summary>
internal static class Checks
{
    /// <summary>Values are writer * 100 + sequence number: one reader sees each writer's values rising.</summary>
    internal static void WriterOrder(IReadOnlyList<int> seen, string who)
    {
        var last = new Dictionary<int, int>();
        foreach (int value in seen)
        {
            int writer = value / 100;
            Assert.True(!last.TryGetValue(writer, out int previous) || value > previous, $"{who} saw [{string.Join(",", seen)}]: writer {writer}'s values out of order.");
            last[writer] = value;
        }
    }

    /// <summary>Everything read, by whoever, is exactly what was written: nothing lost or duplicated.</summary>
    internal static void ExactlyOnce(IEnumerable<int> read, IEnumerable<int> written)
    {
        int[] got = [.. read.Order()];
        int[] want = [.. written.Order()];
        Assert.True(got.SequenceEqual(want), $"Read [{string.Join(",", got)}], written [{string.Join(",", want)}]: a value lost or duplicated.");
    }
}
