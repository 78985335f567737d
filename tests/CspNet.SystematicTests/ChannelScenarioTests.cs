using Microsoft.Coyote.Specifications;
using Xunit.Abstractions;

namespace CspNet.SystematicTests;

/// <summary>
/// The channel engine's core scenarios under Coyote's controlled scheduler (see <see cref="Systematic"/>):
/// rendezvous, buffered FIFO, poison and cancellation, with async parties. Selections are not here:
/// Coyote 1.7.11's rewriting of the selection's async method is invalid IL (docs/ARCHITECTURE.md,
/// "Checking the protocol"); the protocol model in verification/ covers them.
/// </summary>
public class ChannelScenarioTests(ITestOutputHelper output)
{
    private const int Values = 3;

    private static IEnumerable<int> Written(int writers) =>
        Enumerable.Range(0, writers).SelectMany(w => Enumerable.Range(0, Values).Select(i => Check.Value(w, i)));

    private static Task[] StartWriters(CspChannel<int> channel, int writers) =>
        [.. Enumerable.Range(0, writers).Select(w => Task.Run(async () =>
        {
            for (int i = 0; i < Values; i++)
            {
                await channel.Out.WriteAsync(Check.Value(w, i));
            }
        }))];

    private static async Task TwoWritersOneReader(CspChannel<int> channel)
    {
        Task[] writers = StartWriters(channel, 2);
        var seen = new List<int>();
        for (int i = 0; i < 2 * Values; i++)
        {
            seen.Add(await channel.In.ReadAsync());
        }

        await Task.WhenAll(writers);
        Check.WriterOrder(seen, "the reader");
        Check.ExactlyOnce(seen, Written(2));
    }

    [SystematicFact]
    public void Rendezvous_TwoWritersOneReader_EveryValueOnceInWriterOrder() =>
        Systematic.Explore(output, nameof(Rendezvous_TwoWritersOneReader_EveryValueOnceInWriterOrder),
            () => TwoWritersOneReader(new Any2OneChannel<int>()));

    [SystematicTheory]
    [InlineData(1)]
    [InlineData(2)]
    public void BufferedFifo_TwoWritersOneReader_EveryValueOnceInWriterOrder(int capacity) =>
        Systematic.Explore(output, $"{nameof(BufferedFifo_TwoWritersOneReader_EveryValueOnceInWriterOrder)}({capacity})",
            () => TwoWritersOneReader(new Any2OneChannel<int>(new FifoBuffer<int>(capacity))));

    [SystematicFact]
    public void Poison_PartiesOnBothSides_EveryPartyGetsPoison() =>
        Systematic.Explore(output, nameof(Poison_PartiesOnBothSides_EveryPartyGetsPoison), async () =>
        {
            var readFrom = new One2AnyChannel<int>();
            var writeTo = new Any2OneChannel<int>();
            static async Task<bool> Poisoned(Func<Task> party)
            {
                try
                {
                    await party();
                    return false;
                }
                catch (PoisonException)
                {
                    return true;
                }
            }

            Task<bool>[] parties =
            [
                Task.Run(() => Poisoned(async () => await readFrom.In.ReadAsync())),
                Task.Run(() => Poisoned(async () => await readFrom.CreateIn().ReadAsync())),
                Task.Run(() => Poisoned(async () => await writeTo.Out.WriteAsync(1))),
                Task.Run(() => Poisoned(async () => await writeTo.Out.WriteAsync(2))),
            ];
            Task poisoner = Task.Run(() =>
            {
                readFrom.Poison();
                writeTo.Poison();
            });

            await poisoner;
            bool[] outcomes = await Task.WhenAll(parties);
            Specification.Assert(outcomes.All(p => p), "Poison did not reach every party: [{0}].", string.Join(",", outcomes));
        });

    [SystematicFact]
    public void Cancellation_ReadRacingWrite_NothingLostOrDuplicated() =>
        Systematic.Explore(output, nameof(Cancellation_ReadRacingWrite_NothingLostOrDuplicated), async () =>
        {
            var channel = new One2OneChannel<int>();
            Task writer = StartWriters(channel, 1)[0];
            using var cancellation = new CancellationTokenSource();
            Task canceller = Task.Run(cancellation.Cancel);
            var seen = new List<int>();
            try
            {
                seen.Add(await channel.In.ReadAsync(cancellation.Token));
            }
            catch (OperationCanceledException)
            {
            }

            await canceller;
            while (seen.Count < Values)
            {
                seen.Add(await channel.In.ReadAsync());
            }

            await writer;
            Specification.Assert(seen.SequenceEqual(Written(1)), "Read [{0}] around a cancellation.", string.Join(",", seen));
        });
}
