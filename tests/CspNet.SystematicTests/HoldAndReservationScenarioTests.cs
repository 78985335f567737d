using CspNet.Internal;
using Xunit.Abstractions;

namespace CspNet.SystematicTests;

/// <summary>
/// Holds (a value set aside for a remote selecting reader, then committed or given back) and
/// reservations (buffer slots kept for a remote writer's values) under Coyote's controlled scheduler.
/// </summary>
public class HoldAndReservationScenarioTests(ITestOutputHelper output)
{
    private const int Values = 3;

    [SystematicFact]
    public void Hold_ReleasedAndCommittedBesideAReader_EveryValueOnce() =>
        Systematic.Explore(output, nameof(Hold_ReleasedAndCommittedBesideAReader_EveryValueOnce), () => HoldBesideAReader(readerOrder: false));

    /// <summary>
    /// A buffered value held and then released goes back in front of the buffer; a reader must not
    /// have taken a later value meanwhile (hold 1; the writer's 2 reaches the reader; release 1;
    /// the reader reads 1 after 2, as this scenario once found). Reads wait while a buffered value is held.
    /// </summary>
    [SystematicFact]
    public void Hold_ReleasedBesideAReader_ReaderSeesWriterOrder() =>
        Systematic.Explore(output, nameof(Hold_ReleasedBesideAReader_ReaderSeesWriterOrder), () => HoldBesideAReader(readerOrder: true));

    private static async Task HoldBesideAReader(bool readerOrder)
    {
        var channel = new One2AnyChannel<int>(new FifoBuffer<int>(2));
        Task writer = Task.Run(async () =>
        {
            for (int i = 0; i < Values; i++)
            {
                await channel.Out.WriteAsync(i);
            }

            channel.Poison();
        });
        Task<List<int>> holder = Task.Run(async () =>
        {
            var committed = new List<int>();
            bool released = false;
            try
            {
                while (true)
                {
                    ChannelHold<int> hold = await channel.HoldAsync(CancellationToken.None);

                    // The first hold is given back, the others committed: a released value must
                    // be the next one taken, ahead of everything written after it.
                    if (!released)
                    {
                        released = true;
                        channel.Release(hold);
                    }
                    else
                    {
                        committed.Add(hold.Item);
                        CspChannel<int>.Commit(hold);
                    }
                }
            }
            catch (PoisonException)
            {
            }

            return committed;
        });
        AltingChannelIn<int> end = channel.CreateIn();
        var read = new List<int>();
        try
        {
            while (true)
            {
                read.Add(await end.ReadAsync());
            }
        }
        catch (PoisonException)
        {
        }

        await writer;
        List<int> held = await holder;
        if (readerOrder)
        {
            Check.WriterOrder(read, "the reader");
        }

        Check.WriterOrder(held, "the holder");
        Check.ExactlyOnce(read.Concat(held), Enumerable.Range(0, Values));
    }

    [SystematicFact]
    public void Reservation_RemoteWriterBesideALocalWriter_EveryValueOnceInWriterOrder() =>
        Systematic.Explore(output, nameof(Reservation_RemoteWriterBesideALocalWriter_EveryValueOnceInWriterOrder), async () =>
        {
            var channel = new Any2OneChannel<int>(new FifoBuffer<int>(2));
            Task local = Task.Run(async () =>
            {
                for (int i = 0; i < Values; i++)
                {
                    await channel.Out.WriteAsync(Check.Value(0, i));
                }
            });
            Task remote = Task.Run(async () =>
            {
                bool gaveBack = false;
                for (int i = 0; i < Values;)
                {
                    await channel.WhenReservableAsync(CancellationToken.None);
                    if (channel.TryReserve(1) != 1)
                    {
                        continue;
                    }

                    // One reservation is given back unused, as when its remote writer is lost.
                    if (!gaveBack)
                    {
                        gaveBack = true;
                        channel.ReleaseReservations(1);
                        continue;
                    }

                    channel.PutReserved(Check.Value(1, i++));
                }
            });
            var seen = new List<int>();
            for (int i = 0; i < 2 * Values; i++)
            {
                seen.Add(await channel.In.ReadAsync());
            }

            await Task.WhenAll(local, remote);
            Check.WriterOrder(seen, "the reader");
            Check.ExactlyOnce(seen, Enumerable.Range(0, 2).SelectMany(w => Enumerable.Range(0, Values).Select(i => Check.Value(w, i))));
        });
}
