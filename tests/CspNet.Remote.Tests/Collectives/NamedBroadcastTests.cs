using CspNet.Remote.Collectives;
using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Collectives;

/// <summary>
/// The named broadcast between programs: nodes in this test process (each its own endpoint and
/// links, as separate programs have) and, for a killed reader, a separate child program.
/// </summary>
public sealed class NamedBroadcastTests
{
    private const int Timeout = 60_000;

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_TenThousandValuesToThreeReaderPrograms_EachReaderGetsEveryValueOnceInOrder()
    {
        const int Count = 10_000;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode writerNode = await system.NodeAsync("writer");
        BroadcastWriter<int> writer = await NamedBroadcast.CreateAsync<int>(writerNode, "news");
        var readers = new List<BroadcastReader<int>>();
        for (int r = 0; r < 3; r++)
        {
            CspNode node = await system.NodeAsync("reader-" + r);
            readers.Add(await NamedBroadcast.EnrolAsync(node, "news", r == 2 ? new FifoBuffer<int>(8) : null));
        }

        await writer.WaitForReadersAsync(3);
        Task<int>[] reading = [.. readers.Select(ReadInOrderUntilPoisonedAsync)];
        for (int i = 0; i < Count; i++)
        {
            await writer.WriteAsync(i);
        }

        await writer.DisposeAsync();
        Assert.All(await Task.WhenAll(reading), read => Assert.Equal(Count, read));
    }

    [Fact(Timeout = Timeout)]
    public async Task EnrolAsync_ReaderOfAnotherType_ThrowsNamingTheBroadcastAndBothTypes()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        BroadcastWriter<int> writer = await NamedBroadcast.CreateAsync<int>(await system.NodeAsync("writer"), "typed");
        CspNode readerNode = await system.NodeAsync("reader");

        InvalidOperationException wrong = await Assert.ThrowsAsync<InvalidOperationException>(async () => await NamedBroadcast.EnrolAsync<string>(readerNode, "typed"));
        Assert.Contains("broadcast 'typed'", wrong.Message, StringComparison.Ordinal);
        Assert.Contains("System.String", wrong.Message, StringComparison.Ordinal);
        Assert.Contains("int", wrong.Message, StringComparison.OrdinalIgnoreCase);

        // The broadcast goes on: a reader of its type enrols and reads.
        BroadcastReader<int> reader = await NamedBroadcast.EnrolAsync<int>(readerNode, "typed");
        await writer.WaitForReadersAsync(1);
        Task write = writer.WriteAsync(3).AsTask();
        Assert.Equal(3, await reader.ReadAsync());
        await write;
        await writer.DisposeAsync();
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_OneUnbufferedReaderHasNotRead_CompletesOnlyWhenItTookTheValue()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        BroadcastWriter<int> writer = await NamedBroadcast.CreateAsync<int>(await system.NodeAsync("writer"), "sync");
        BroadcastReader<int> quick = await NamedBroadcast.EnrolAsync<int>(await system.NodeAsync("quick"), "sync");
        BroadcastReader<int> slow = await NamedBroadcast.EnrolAsync<int>(await system.NodeAsync("slow"), "sync");
        BroadcastReader<int> buffered = await NamedBroadcast.EnrolAsync(await system.NodeAsync("buffered"), "sync", new FifoBuffer<int>(1));
        await writer.WaitForReadersAsync(3);

        Task write = writer.WriteAsync(7).AsTask();
        Assert.Equal(7, await quick.ReadAsync());
        Assert.False(await Finishes(write), "the write completed before the slow reader took the value");
        Assert.Equal(7, await slow.ReadAsync());
        await write;
        Assert.Equal(7, await buffered.ReadAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task ResignAsync_WhileTheWriterWaitsForThatReader_TheWriteCompletesWithoutIt()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        BroadcastWriter<int> writer = await NamedBroadcast.CreateAsync<int>(await system.NodeAsync("writer"), "leaving");
        BroadcastReader<int> staying = await NamedBroadcast.EnrolAsync<int>(await system.NodeAsync("staying"), "leaving");
        BroadcastReader<int> leaving = await NamedBroadcast.EnrolAsync<int>(await system.NodeAsync("leaver"), "leaving");
        await writer.WaitForReadersAsync(2);

        Task write = writer.WriteAsync(1).AsTask();
        Assert.Equal(1, await staying.ReadAsync());
        await leaving.ResignAsync();
        await write;
        Assert.Equal(1, writer.Readers);
        Task next = writer.WriteAsync(2).AsTask();
        Assert.Equal(2, await staying.ReadAsync());
        await next;
        await Assert.ThrowsAsync<PoisonException>(async () => await leaving.ReadAsync());
    }

    [Fact(Timeout = Timeout)]
    public async Task Poison_ByAReader_TheNextWriteThrowsAndEveryReaderAndEnrolmentIsPoisoned()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode readerNode = await system.NodeAsync("readers");
        BroadcastWriter<int> writer = await NamedBroadcast.CreateAsync<int>(await system.NodeAsync("writer"), "bad");
        BroadcastReader<int> poisoner = await NamedBroadcast.EnrolAsync<int>(readerNode, "bad");
        BroadcastReader<int> other = await NamedBroadcast.EnrolAsync<int>(await system.NodeAsync("other"), "bad");
        await writer.WaitForReadersAsync(2);

        poisoner.Poison();
        Task<int> otherRead = other.ReadAsync().AsTask();
        PoisonException error = await Assert.ThrowsAsync<PoisonException>(async () => await writer.WriteAsync(1));
        Assert.Contains("'bad'", error.Message, StringComparison.Ordinal);
        // The write reached the other reader at the same time as the poisoned one: it may have the value.
        await Assert.ThrowsAnyAsync<PoisonException>(async () =>
        {
            await otherRead;
            await other.ReadAsync();
        });
        await Assert.ThrowsAsync<PoisonException>(async () => await writer.WriteAsync(2));
        await Assert.ThrowsAnyAsync<PoisonException>(async () => await NamedBroadcast.EnrolAsync<int>(readerNode, "bad"));
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_ReaderProgramKilled_ThrowsPeerLostNamingItAndTheOthersGetEveryValue()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        BroadcastWriter<int> writer = await NamedBroadcast.CreateAsync<int>(await system.NodeAsync("writer"), "bulletin");
        BroadcastReader<int> survivor = await NamedBroadcast.EnrolAsync<int>(await system.NodeAsync("survivor"), "bulletin");
        ChildNode doomed = system.Child("broadcast-read", "bulletin");
        await doomed.ReadyAsync();
        await writer.WaitForReadersAsync(2);
        Task<int> surviving = ReadInOrderUntilPoisonedAsync(survivor);

        int next = 0;
        for (; next < 200; next++)
        {
            await writer.WriteAsync(next);
        }

        await doomed.WaitForAsync("flowing");
        await doomed.KillAsync();
        PeerLostException? lost = null;
        while (lost is null)
        {
            try
            {
                await writer.WriteAsync(next);
            }
            catch (PeerLostException e)
            {
                lost = e;
            }

            next++;
        }

        Assert.Contains("Broadcasting on 'bulletin'", lost.Message, StringComparison.Ordinal);
        Assert.Contains("Lost the program 'testnode-broadcast-read-", lost.Message, StringComparison.Ordinal);
        Assert.Equal(1, writer.Readers);
        for (int i = 0; i < 1_000; i++, next++)
        {
            await writer.WriteAsync(next);
        }

        await writer.DisposeAsync();
        Assert.Equal(next, await surviving);
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_CancelledBeforeAnyReaderTookTheValue_NoReaderGetsIt()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (BroadcastWriter<int> writer, BroadcastReader<int> first, BroadcastReader<int> second) = await TwoReadersAsync(system, "maybe");

        using var cancel = new CancellationTokenSource();
        Task write = writer.WriteAsync(1, cancel.Token).AsTask();
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => write);
        Task next = writer.WriteAsync(2).AsTask();
        Assert.Equal(2, await first.ReadAsync());
        Assert.Equal(2, await second.ReadAsync());
        await next;
    }

    [Fact(Timeout = Timeout)]
    public async Task WriteAsync_CancelledAfterOneReaderTookTheValue_CompletesAndEveryReaderGetsIt()
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (BroadcastWriter<int> writer, BroadcastReader<int> first, BroadcastReader<int> second) = await TwoReadersAsync(system, "surely");

        using var cancel = new CancellationTokenSource();
        Task write = writer.WriteAsync(1, cancel.Token).AsTask();
        Assert.Equal(1, await first.ReadAsync());
        await cancel.CancelAsync();
        Assert.Equal(1, await second.ReadAsync());
        await write;
        Task next = writer.WriteAsync(2).AsTask();
        Assert.Equal(2, await first.ReadAsync());
        Assert.Equal(2, await second.ReadAsync());
        await next;
    }

    // A writer and two readers, each in a program of its own, both enrolled.
    private static async Task<(BroadcastWriter<int> Writer, BroadcastReader<int> First, BroadcastReader<int> Second)> TwoReadersAsync(TestSystem system, string name)
    {
        BroadcastWriter<int> writer = await NamedBroadcast.CreateAsync<int>(await system.NodeAsync("writer"), name);
        BroadcastReader<int> first = await NamedBroadcast.EnrolAsync<int>(await system.NodeAsync("first"), name);
        BroadcastReader<int> second = await NamedBroadcast.EnrolAsync<int>(await system.NodeAsync("second"), name);
        await writer.WaitForReadersAsync(2);
        return (writer, first, second);
    }

    // Reads until the broadcast ends, checking each value is the one after the last; returns how many.
    private static async Task<int> ReadInOrderUntilPoisonedAsync(BroadcastReader<int> reader)
    {
        int read = 0;
        try
        {
            while (true)
            {
                Assert.Equal(read, await reader.ReadAsync());
                read++;
            }
        }
        catch (PoisonException)
        {
            return read;
        }
    }

    // Whether the task completes within a short while: for checks that something has NOT happened.
    private static async Task<bool> Finishes(Task task) =>
        await Task.WhenAny(task, Task.Delay(TimeSpan.FromMilliseconds(300))) == task;
}
