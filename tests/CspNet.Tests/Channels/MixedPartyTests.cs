namespace CspNet.Tests.Channels;

/// <summary>
/// Thread and async processes meet on the same channel in either direction, on every kind,
/// buffered or not.
/// </summary>
public class MixedPartyTests
{
    private const int Count = 5_000;

    public static TheoryData<ChannelKind, int> KindsAndCapacities()
    {
        var data = new TheoryData<ChannelKind, int>();
        foreach (ChannelKind kind in Enum.GetValues<ChannelKind>())
        {
            data.Add(kind, 0);
            data.Add(kind, 1);
            data.Add(kind, 16);
        }

        return data;
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndCapacities))]
    public async Task WriteReadAsync_ThreadWriterAsyncReader_AllValuesInOrder(ChannelKind kind, int capacity)
    {
        CspChannel<int> channel = Create(kind, capacity);
        var writer = ThreadParty.Start(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                channel.Write(i);
            }
        });

        List<int> received = await Task.Run(async () =>
        {
            var values = new List<int>(Count);
            for (int i = 0; i < Count; i++)
            {
                values.Add(await channel.ReadAsync());
            }

            return values;
        });

        await writer.Completion;
        Assert.Equal(Enumerable.Range(0, Count), received);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndCapacities))]
    public async Task WriteAsyncRead_AsyncWriterThreadReader_AllValuesInOrder(ChannelKind kind, int capacity)
    {
        CspChannel<int> channel = Create(kind, capacity);
        var reader = ThreadParty.Start(() =>
        {
            var values = new List<int>(Count);
            for (int i = 0; i < Count; i++)
            {
                values.Add(channel.Read());
            }

            return values;
        });

        await Task.Run(async () =>
        {
            for (int i = 0; i < Count; i++)
            {
                await channel.WriteAsync(i);
            }
        });

        Assert.Equal(Enumerable.Range(0, Count), await reader.Completion);
    }

    [Theory(Timeout = 20_000)]
    [MemberData(nameof(KindsAndCapacities))]
    public async Task WriteRead_PartiesAlternateBetweenThreadAndAsync_AllValuesInOrder(ChannelKind kind, int capacity)
    {
        // Each end is one process that switches between blocking and async operations every few
        // values (handing over between a thread and an async method), so every pairing occurs.
        const int Chunk = 50;
        CspChannel<int> channel = Create(kind, capacity);
        Task writer = Task.Run(async () =>
        {
            for (int from = 0; from < Count; from += Chunk)
            {
                int start = from;
                if (start / Chunk % 2 == 0)
                {
                    await ThreadParty.Start(() =>
                    {
                        for (int i = start; i < start + Chunk; i++)
                        {
                            channel.Write(i);
                        }
                    }).Completion;
                }
                else
                {
                    for (int i = start; i < start + Chunk; i++)
                    {
                        await channel.WriteAsync(i);
                    }
                }
            }
        });

        var received = new List<int>(Count);
        for (int from = 0; from < Count; from += Chunk * 3 / 2)
        {
            int size = Math.Min(Chunk * 3 / 2, Count - from);
            if (from / (Chunk * 3 / 2) % 2 == 0)
            {
                received.AddRange(await ThreadParty.Start(() => Enumerable.Range(0, size).Select(_ => channel.Read()).ToList()).Completion);
            }
            else
            {
                for (int i = 0; i < size; i++)
                {
                    received.Add(await channel.ReadAsync());
                }
            }
        }

        await writer;
        Assert.Equal(Enumerable.Range(0, Count), received);
    }

    [Theory(Timeout = 30_000)]
    [InlineData(ChannelKind.Any2One, 0)]
    [InlineData(ChannelKind.Any2One, 4)]
    [InlineData(ChannelKind.One2Any, 0)]
    [InlineData(ChannelKind.One2Any, 4)]
    [InlineData(ChannelKind.Any2Any, 0)]
    [InlineData(ChannelKind.Any2Any, 4)]
    public async Task WriteRead_ThreadAndAsyncPartiesOnSharedEnds_EveryValueOnce(ChannelKind kind, int capacity)
    {
        CspChannel<int> channel = Create(kind, capacity);
        int writers = TestChannels.SharedWriter(kind) ? 2 : 1;
        int readers = TestChannels.SharedReader(kind) ? 2 : 1;
        int[] counts = new int[2 * writers * Count];
        var parties = new List<Task>();

        // Each writer slot has a thread writer and an async writer (on a One end, one after the other).
        for (int w = 0; w < writers; w++)
        {
            int first = 2 * w * Count;
            Task ThreadWriter() => ThreadParty.Start(() =>
            {
                for (int i = first; i < first + Count; i++)
                {
                    channel.Write(i);
                }
            }).Completion;
            async Task AsyncWriter()
            {
                for (int i = first + Count; i < first + 2 * Count; i++)
                {
                    await channel.WriteAsync(i);
                }
            }

            parties.Add(TestChannels.SharedWriter(kind)
                ? Task.WhenAll(ThreadWriter(), Task.Run(AsyncWriter))
                : Task.Run(async () =>
                {
                    await ThreadWriter();
                    await AsyncWriter();
                }));
        }

        var readerTasks = new List<Task>();
        for (int r = 0; r < readers; r++)
        {
            readerTasks.Add(ThreadParty.Start(() =>
            {
                foreach (int value in channel.ReadAll())
                {
                    Interlocked.Increment(ref counts[value]);
                }
            }).Completion);
            if (TestChannels.SharedReader(kind))
            {
                readerTasks.Add(Task.Run(async () =>
                {
                    await foreach (int value in channel.ReadAllAsync())
                    {
                        Interlocked.Increment(ref counts[value]);
                    }
                }));
            }
        }

        try
        {
            await Task.WhenAll(parties);
        }
        finally
        {
            channel.Poison();
        }

        await Task.WhenAll(readerTasks);
        ManyPartiesTests.AssertEachOnce(counts);
    }

    private static CspChannel<int> Create(ChannelKind kind, int capacity) =>
        capacity == 0 ? TestChannels.Create<int>(kind) : TestChannels.Create(kind, new FifoBuffer<int>(capacity));
}
