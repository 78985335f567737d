using System.Collections.Generic;
using System.Linq;
using CspNet.Internal;
using Xunit.Abstractions;

namespace CspNet.ControlledTests;

/// <summary>
/// Reader claims (a parked plain reader set aside for a remote selecting writer, see
/// CspChannel.ReaderClaims.cs) under the controlled scheduler: a claimer that delivers some claims
/// and releases others races a plain writer and the reader's own arrivals. Under every explored
/// interleaving each value is read exactly once and each writer's values arrive in order.
/// </summary>
public class ReaderClaimScenarioTests(ITestOutputHelper output)
{
    private const int ClaimerValues = 3;

    /// <summary>Thread (T) or async (A) reader and writer.</summary>
    public static TheoryData<string> Kinds => new() { "TT", "TA", "AT", "AA" };

    [Theory]
    [MemberData(nameof(Kinds))]
    public void ReaderClaim_DeliveredOrReleasedBesideAPlainWriter_EveryValueOnceInWriterOrder(string kinds) =>
        Explorer.Explore(output, $"{nameof(ReaderClaim_DeliveredOrReleasedBesideAPlainWriter_EveryValueOnceInWriterOrder)}({kinds})", s =>
        {
            var channel = new Any2OneChannel<int>();
            var seen = new List<int>();
            ChannelScenarioTests.AddReader(s, "reader", kinds[0] == 'A', channel.In, seen, ClaimerValues + 2);
            ChannelScenarioTests.AddWriter(s, "writer", kinds[1] == 'A', channel.CreateOut(), 100, 2);
            AddClaimer(s, channel, channel.CreateOut());
            s.Check(() =>
            {
                Checks.WriterOrder(seen, "the reader");
                Checks.ExactlyOnce(seen, [0, 1, 2, 100, 101]);
            });
        });

    [Fact]
    public void ReaderClaim_ReleasedWhileChannelPoisoned_ReaderGetsValueOrPoisonNeverBoth() =>
        Explorer.Explore(output, nameof(ReaderClaim_ReleasedWhileChannelPoisoned_ReaderGetsValueOrPoisonNeverBoth), s =>
        {
            var channel = new Any2OneChannel<int>();
            var seen = new List<int>();
            bool poisoned = false;
            s.Thread("reader", () =>
            {
                try
                {
                    while (true)
                    {
                        seen.Add(channel.In.Read());
                    }
                }
                catch (PoisonException)
                {
                    poisoned = true;
                }
            });
            AddClaimer(s, channel, channel.CreateOut());
            s.Async("poisoner", async () =>
            {
                await channel.CreateOut().WriteAsync(100);
                channel.Poison();
            });
            s.Check(() =>
            {
                Assert.True(poisoned, "The reader ended without the poison.");
                Checks.WriterOrder(seen, "the reader");
                Assert.Equal(seen.Count, seen.Distinct().Count());
                Assert.Contains(100, seen);
            });
        });

    /// <summary>
    /// Offers 0, 1, 2 as a remote selecting writer's home would: claims the parked reader and
    /// delivers, after releasing every even value's first claim; with no reader parked (or after a
    /// release found none again) it writes the value plainly, so that it never waits by polling.
    /// Stops at the poison.
    /// </summary>
    private static void AddClaimer(Scenario s, CspChannel<int> channel, AltingChannelOut<int> plain) =>
        s.Thread("claimer", () =>
        {
            try
            {
                for (int value = 0; value < ClaimerValues; value++)
                {
                    ReaderClaim<int>? claim = channel.TryClaimReader();
                    if (claim is not null && value % 2 == 0)
                    {
                        channel.Release(claim);
                        claim = channel.TryClaimReader();
                    }

                    if (claim is not null)
                    {
                        channel.Deliver(claim, value);
                    }
                    else
                    {
                        plain.Write(value);
                    }
                }
            }
            catch (PoisonException)
            {
            }
        });
}
