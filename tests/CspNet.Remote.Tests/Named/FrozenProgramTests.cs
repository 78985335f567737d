using System.Diagnostics;
using System.Globalization;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// A program frozen with SIGSTOP (a stopped debugger, a swapped-out VM) mid-write, mid-chunk or
/// mid-select is a lost program within about the peer timeout for the program waiting on it; once it
/// continues (SIGCONT) it learns that it was lost, and between the two sides no value was lost or
/// duplicated: the reader got exactly the values whose writes completed, plus at most the one
/// whose answer the freeze swallowed.
/// </summary>
public sealed class FrozenProgramTests
{
    private const int Timeout = 90_000;

    // The reader here notices within the peer timeout plus the keep-alive check's period (DEPLOYING.md's failure table).
    private static readonly TimeSpan Bound = (TestSystem.PeerTimeout * 2) + TimeSpan.FromSeconds(4);

    [Theory(Timeout = Timeout)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task FrozenWriterProgram_MidWrite_ReaderHereLosesItAndNothingIsLostOrDuplicated(bool selecting)
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<int> input = await node.GetOne2OneInAsync<int>("frozen");
        ChildNode writer = system.Child("write-seq", "One2One", "frozen");
        var idle = new One2OneChannel<int>();
        var alternative = new Alternative([input, idle.In]);

        int read = 0;
        async Task<int> NextAsync()
        {
            if (selecting)
            {
                Assert.Equal(0, await alternative.FairSelectAsync());
            }

            return await input.ReadAsync();
        }

        while (read < 200)
        {
            Assert.Equal(read, await NextAsync());
            read++;
        }

        // Values already on their way may still arrive, in order; then the writer is lost.
        string[] words = await FreezeUntilLostAsync(writer, "writer", async () =>
        {
            Assert.Equal(read, await NextAsync());
            read++;
        });
        int written = int.Parse(words[2], CultureInfo.InvariantCulture);
        Assert.Equal("PeerLostException", words[3]);
        Assert.InRange(read - written, 0, 1);
    }

    [Fact(Timeout = Timeout)]
    public async Task FrozenWriterProgram_MidChunk_ReaderHereLosesItAndGetsNoPartOfTheValueInTransfer()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        // 4 MiB values in 16 KiB chunks, written back to back: the writer spends nearly all its time
        // sending chunks, so the freeze lands with a value partly sent.
        const int Size = 4 << 20;
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("reader");
        AltingChannelIn<byte[]> input = await node.GetOne2OneInAsync<byte[]>("frozen-big");
        ChildNode writer = system.Child("write-big-seq", "frozen-big", Size.ToString(CultureInfo.InvariantCulture));

        int read = 0;
        async Task ReadNextAsync()
        {
            byte[] value = await input.ReadAsync();
            Assert.Equal((Size, read), (value.Length, BitConverter.ToInt32(value)));
            read++;
        }

        while (read < 5)
        {
            await ReadNextAsync();
        }

        string[] words = await FreezeUntilLostAsync(writer, "writer", ReadNextAsync);
        Assert.Equal("PeerLostException", words[3]);
        Assert.InRange(read - int.Parse(words[2], CultureInfo.InvariantCulture), 0, 1);
    }

    [Fact(Timeout = Timeout)]
    public async Task FrozenReaderProgram_MidWrite_WriterHereLosesItAndNothingIsLostOrDuplicated()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        await using TestSystem system = await TestSystem.StartAsync();
        CspNode node = await system.NodeAsync("writer");
        ChildNode reader = system.Child("read-seq", "One2One", "frozen");
        await reader.ReadyAsync();
        AltingChannelOut<int> output = await node.GetOne2OneOutAsync<int>("frozen");
        int written = 0;
        while (written < 200)
        {
            await output.WriteAsync(written);
            written++;
        }

        string[] words = await FreezeUntilLostAsync(reader, "reader", async () =>
        {
            await output.WriteAsync(written);
            written++;
        });
        int read = int.Parse(words[2], CultureInfo.InvariantCulture);
        Assert.InRange(read - written, 0, 1);
    }

    /// <summary>
    /// Freezes <paramref name="child"/> (SIGSTOP), repeats <paramref name="step"/> here until it
    /// fails with <see cref="PeerLostException"/>, lets the child go on (SIGCONT) and returns the
    /// words of its "done" line; the loss must be noticed within <see cref="Bound"/>.
    /// </summary>
    private static async Task<string[]> FreezeUntilLostAsync(ChildNode child, string role, Func<Task> step)
    {
        Signal("STOP", child.Id);
        var frozen = Stopwatch.StartNew();
        try
        {
            while (true)
            {
                await step();
            }
        }
        catch (PeerLostException)
        {
        }

        TimeSpan noticed = frozen.Elapsed;
        Signal("CONT", child.Id);
        string done = await child.WaitForAsync("done");

        Assert.True(noticed < Bound, $"The frozen {role} was noticed after {noticed} (bound {Bound}).");
        return done.Split(' ');
    }

    private static void Signal(string signal, int processId)
    {
        using Process kill = Process.Start("kill", ["-" + signal, processId.ToString(CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
        Assert.Equal(0, kill.ExitCode);
    }
}
