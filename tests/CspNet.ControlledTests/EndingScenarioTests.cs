using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using CspNet.Alternation;
using Xunit.Abstractions;

namespace CspNet.ControlledTests;

/// <summary>
/// Scenarios where operations end otherwise than by a rendezvous, under the controlled scheduler:
/// poison, cancellation racing completion, misuse refused, holds released beside local parties.
/// </summary>
public class EndingScenarioTests(ITestOutputHelper output)
{
    [Fact]
    public void Poison_PartiesOnBothSidesAndASelection_EveryPartyGetsPoison() =>
        Explorer.Explore(output, nameof(Poison_PartiesOnBothSidesAndASelection_EveryPartyGetsPoison), s =>
        {
            var readFrom = new One2AnyChannel<int>();
            var writeTo = new Any2OneChannel<int>();
            var idle = new One2OneChannel<int>();
            bool[] poisoned = new bool[4];
            AltingChannelIn<int> selectedEnd = readFrom.CreateIn();
            var selection = new Alternative(selectedEnd, idle.In);
            s.Thread("thread reader", () => poisoned[0] = Throws<PoisonException>(() => readFrom.In.Read()));
            AltingChannelIn<int> asyncEnd = readFrom.CreateIn();
            s.Async("async reader", async () =>
            {
                try
                {
                    await asyncEnd.ReadAsync();
                }
                catch (PoisonException)
                {
                    poisoned[1] = true;
                }
            });
            s.Async("async writer", async () =>
            {
                try
                {
                    await writeTo.Out.WriteAsync(1);
                }
                catch (PoisonException)
                {
                    poisoned[2] = true;
                }
            });
            // A poisoned input is ready: the selection chooses it and the read throws the poison.
            s.Thread("selector", () => poisoned[3] = Throws<PoisonException>(() =>
            {
                Assert.Equal(0, selection.Select());
                selectedEnd.Read();
            }));
            s.Thread("poisoner", () =>
            {
                readFrom.Poison();
                writeTo.Poison();
            });
            s.Check(() => Assert.True(poisoned.All(p => p), $"Poison did not reach every party: [{string.Join(",", poisoned)}]."));
        });

    /// <summary>A read cancelled while a writer writes: either it took the value or nothing; the rest follows in order, once.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Cancellation_ReadOrSelectionRacingWrite_NothingLostOrDuplicated(bool selecting) =>
        Explorer.Explore(output, $"{nameof(Cancellation_ReadOrSelectionRacingWrite_NothingLostOrDuplicated)}({selecting})", s =>
        {
            const int count = 3;
            var channel = new One2OneChannel<int>();
            var cancellation = new CancellationTokenSource();
            var selection = new Alternative(channel.In);
            var seen = new List<int>();
            ChannelScenarioTests.AddWriter(s, "writer", false, channel.Out, 0, count);
            s.Async("reader", async () =>
            {
                try
                {
                    if (selecting)
                    {
                        await selection.SelectAsync(cancellation.Token);
                    }

                    seen.Add(await channel.In.ReadAsync(selecting ? default : cancellation.Token));
                }
                catch (OperationCanceledException)
                {
                }

                while (seen.Count < count)
                {
                    seen.Add(await channel.In.ReadAsync());
                }
            });

            // Cancel runs its callbacks without scheduling points: see Schedule.Atomically.
            s.Thread("canceller", () => Schedule.Atomically(cancellation.Cancel));
            s.Check(() =>
            {
                cancellation.Dispose();
                Assert.Equal(Enumerable.Range(0, count), seen);
            });
        });

    /// <summary>A write cancelled while a reader reads: the value was delivered once or not at all (then it is written again).</summary>
    [Fact]
    public void Cancellation_WriteRacingRead_DeliveredOnceOrNotAtAll() =>
        Explorer.Explore(output, nameof(Cancellation_WriteRacingRead_DeliveredOnceOrNotAtAll), s =>
        {
            var channel = new One2OneChannel<int>();
            var cancellation = new CancellationTokenSource();
            var seen = new List<int>();
            s.Async("writer", async () =>
            {
                try
                {
                    await channel.Out.WriteAsync(0, cancellation.Token);
                }
                catch (OperationCanceledException)
                {
                    await channel.Out.WriteAsync(0);
                }

                await channel.Out.WriteAsync(1);
            });
            ChannelScenarioTests.AddReader(s, "reader", false, channel.In, seen, 2);
            s.Thread("canceller", () => Schedule.Atomically(cancellation.Cancel));
            s.Check(() =>
            {
                cancellation.Dispose();
                Assert.Equal([0, 1], seen);
            });
        });

    /// <summary>
    /// Two parties misuse one One2One input end (plainly or by selecting over it): a refused call
    /// takes nothing, and every write that completed was read exactly once, by one of them.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Misuse_TwoReadersOnOneEnd_RefusalTakesNothing(bool selecting) =>
        Explorer.Explore(output, $"{nameof(Misuse_TwoReadersOnOneEnd_RefusalTakesNothing)}({selecting})", s =>
        {
            const int count = 3;
            var channel = new One2OneChannel<int>();
            var seen = new[] { new List<int>(), new List<int>() };
            var events = new List<string>();
            int written = 0;
            s.Thread("writer", () =>
            {
                try
                {
                    for (int i = 0; i < count; i++)
                    {
                        channel.Out.Write(i);
                        written++;
                    }

                    // Every value was taken (a rendezvous): the poison ends a reader still waiting.
                    channel.Out.Poison();
                }
                catch (PoisonException)
                {
                    // A refused reader ended the run: the write in progress delivered nothing.
                }
            });
            for (int r = 0; r < 2; r++)
            {
                List<int> mine = seen[r];
                int name = r;
                var selection = new Alternative(channel.In, new One2OneChannel<int>().In);
                s.Thread($"reader {r}", () =>
                {
                    try
                    {
                        while (true)
                        {
                            if (selecting)
                            {
                                Assert.Equal(0, selection.PriSelect());
                                events.Add($"reader {name} selected");
                            }

                            mine.Add(channel.In.Read());
                            events.Add($"reader {name} read {mine[^1]}");
                        }
                    }
                    catch (PoisonException)
                    {
                        // The writer is done.
                    }
                    catch (InvalidOperationException)
                    {
                        // Refused: this party stops and ends the run (both may be refused, and
                        // the writer would then wait for ever). Every write that completed must
                        // still have been read exactly once.
                        events.Add($"reader {name} refused");
                        channel.In.Poison();
                    }
                });
            }

            s.Check(() =>
            {
                if (!selecting)
                {
                    // Two selections on one end are not always refused, and a reader may then
                    // take a value the other's selection committed: each reader's order holds
                    // for plain reads only (docs/ARCHITECTURE.md, "The systematic tests").
                    Checks.WriterOrder(seen[0], $"reader 0 ({string.Join("; ", events)})");
                    Checks.WriterOrder(seen[1], $"reader 1 ({string.Join("; ", events)})");
                }

                Assert.True(
                    seen[0].Concat(seen[1]).Order().SequenceEqual(Enumerable.Range(0, written)),
                    $"{written} writes completed; read [{string.Join(",", seen[0])}] and [{string.Join(",", seen[1])}]: a value lost or duplicated ({string.Join("; ", events)}).");
            });
        });

    /// <summary>
    /// A hold (a remote selecting reader's) sets a buffered value aside and gives it back, beside a
    /// local reader: the value goes back in front (the front slots), and the reader sees the
    /// written order.
    /// </summary>
    [Theory]
    [InlineData(1, false)]
    [InlineData(2, false)]
    [InlineData(2, true)]
    public void Hold_ReleasedBesideLocalReader_ValuesInWrittenOrder(int capacity, bool asyncReader) =>
        Explorer.Explore(output, $"{nameof(Hold_ReleasedBesideLocalReader_ValuesInWrittenOrder)}({capacity},{asyncReader})", s =>
        {
            const int count = 4;
            var channel = new One2OneChannel<int>(new FifoBuffer<int>(capacity));
            var seen = new List<int>();
            ChannelScenarioTests.AddWriter(s, "writer", false, channel.Out, 0, count);
            ChannelScenarioTests.AddReader(s, "reader", asyncReader, channel.In, seen, count);
            s.Thread("holder", () =>
            {
                for (int attempt = 0; attempt < 2; attempt++)
                {
                    if (channel.TryHold() is { } hold)
                    {
                        channel.Release(hold);
                    }
                }
            });
            s.Check(() => Assert.True(seen.SequenceEqual(Enumerable.Range(0, count)), $"The reader saw [{string.Join(",", seen)}]: not the written order."));
        });

    private static bool Throws<TException>(Action action)
        where TException : Exception
    {
        try
        {
            action();
            return false;
        }
        catch (TException)
        {
            return true;
        }
    }
}
