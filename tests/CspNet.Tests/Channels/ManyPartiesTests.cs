namespace CspNet.Tests.Channels;

/// <summary>
/// Every kind with as many concurrent writers and readers as it allows: each value sent arrives
/// exactly once, and with a single reader each writer's values arrive in the order sent.
/// </summary>
public class ManyPartiesTests
{
    private const int ItemsPerWriter = 4_000;

    public static TheoryData<ChannelKind, PartyMode, int> Cases()
    {
        var data = new TheoryData<ChannelKind, PartyMode, int>();
        foreach (ChannelKind kind in Enum.GetValues<ChannelKind>())
        {
            foreach (PartyMode mode in Enum.GetValues<PartyMode>())
            {
                data.Add(kind, mode, 0);
                data.Add(kind, mode, 3);
            }
        }

        return data;
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Cases))]
    public async Task WriteRead_ConcurrentWritersAndReaders_EveryValueArrivesExactlyOnce(ChannelKind kind, PartyMode mode, int bufferCapacity)
    {
        CspChannel<int> channel = bufferCapacity == 0
            ? TestChannels.Create<int>(kind)
            : TestChannels.Create<int>(kind, new FifoBuffer<int>(bufferCapacity));
        int writers = TestChannels.SharedWriter(kind) ? 4 : 1;
        int readers = TestChannels.SharedReader(kind) ? 4 : 1;

        int[] counts = await Exchange(channel, writers, readers, mode, checkOrder: readers == 1);

        AssertEachOnce(counts);
    }

    internal static void AssertEachOnce(int[] counts)
    {
        int[] wrong = [.. Enumerable.Range(0, counts.Length).Where(i => counts[i] != 1).Take(10)];
        Assert.True(wrong.Length == 0, "Items not received exactly once: " + string.Join(", ", wrong.Select(i => $"{i} x{counts[i]}")));
    }

    /// <summary>
    /// Writer <c>w</c> sends <c>w * ItemsPerWriter ..</c>; readers read until poison, which the test
    /// sends once every write has completed. Returns how often each value was received.
    /// </summary>
    private static async Task<int[]> Exchange(CspChannel<int> channel, int writers, int readers, PartyMode mode, bool checkOrder)
    {
        int[] counts = new int[writers * ItemsPerWriter];
        int[] last = new int[writers];
        Array.Fill(last, -1);
        int outOfOrder = 0;

        void Record(int value)
        {
            Interlocked.Increment(ref counts[value]);
            if (checkOrder)
            {
                int writer = value / ItemsPerWriter;
                if (value <= last[writer])
                {
                    outOfOrder++;
                }

                last[writer] = value;
            }
        }

        bool IsThread(int index) => mode == PartyMode.Threads || (mode == PartyMode.Mixed && index % 2 == 0);

        var readerTasks = new List<Task>();
        for (int r = 0; r < readers; r++)
        {
            if (IsThread(r + 1))
            {
                readerTasks.Add(ThreadParty.Start(() =>
                {
                    foreach (int value in channel.ReadAll())
                    {
                        Record(value);
                    }
                }).Completion);
            }
            else
            {
                readerTasks.Add(Task.Run(async () =>
                {
                    await foreach (int value in channel.ReadAllAsync())
                    {
                        Record(value);
                    }
                }));
            }
        }

        var writerTasks = new List<Task>();
        for (int w = 0; w < writers; w++)
        {
            int first = w * ItemsPerWriter;
            if (IsThread(w))
            {
                writerTasks.Add(ThreadParty.Start(() =>
                {
                    for (int value = first; value < first + ItemsPerWriter; value++)
                    {
                        channel.Write(value);
                    }
                }).Completion);
            }
            else
            {
                writerTasks.Add(Task.Run(async () =>
                {
                    for (int value = first; value < first + ItemsPerWriter; value++)
                    {
                        await channel.WriteAsync(value);
                    }
                }));
            }
        }

        try
        {
            await Task.WhenAll(writerTasks);
        }
        finally
        {
            channel.Poison();
        }

        await Task.WhenAll(readerTasks);
        Assert.Equal(0, outOfOrder);
        return counts;
    }
}
