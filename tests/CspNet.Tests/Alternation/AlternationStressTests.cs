using System.Diagnostics;
using Xunit.Abstractions;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>
/// Millions of alternations by mixed thread and async parties over every channel kind, with
/// output guards, random cancellation of selects and writes, plain readers competing with
/// alternating ones, and poison at the end; every item must be read exactly once.
/// </summary>
public class AlternationStressTests(ITestOutputHelper output)
{
    [Fact(Timeout = 180000)]
    public async Task Alternation_MixedPartiesOverEveryKind_EveryItemReadExactlyOnce()
    {
        // CSPNET_ALT_STRESS_ITEMS and CSPNET_ALT_STRESS_SEED override the size and seed (to replay a failure).
        int items = int.TryParse(Environment.GetEnvironmentVariable("CSPNET_ALT_STRESS_ITEMS"), out int i) ? i : 300_000;
        int seed = int.TryParse(Environment.GetEnvironmentVariable("CSPNET_ALT_STRESS_SEED"), out int s) ? s : Environment.TickCount;
        output.WriteLine($"seed {seed}, {items} items per writer");
        AltStressRun.Result result = await new AltStressRun(items, seed).RunAsync();
        output.WriteLine(result.ToString());
        result.Counter.AssertEachExactlyOnce();
        Assert.True(result.CancelledSelects > 0, "No select was cancelled.");
        Assert.True(result.CancelledWrites > 0, "No write was cancelled.");
        Assert.True(result.OutputSelections > 0 && result.InputSelections > 0);
    }

    /// <summary>
    /// Targets a race between an output guard's offer and its partners. An async process offers
    /// on a One2Any channel read by six threads, and also alternates over an input channel whose
    /// writer keeps waking it. When a reader takes the offer while the owner is awake (woken by
    /// the input, not yet withdrawn the offer), OfferWaiter records "no wake needed" in a field
    /// of the reused offer node and the reader reads that field again only after leaving the
    /// channel lock. If the reader is preempted there, the owner meanwhile completes, offers
    /// again, parks, and a second reader takes the new offer and records "wake needed": the
    /// first reader then reads that, wakes the owner a second time, and its Read throws
    /// InvalidOperationException from ManualResetValueTaskSourceCore.SetResult, after it has
    /// taken the value. The window is narrow: this run usually passes (one failure in about
    /// three minutes of this load on a 2-core machine).
    /// </summary>
    [Fact(Timeout = 60000)]
    public async Task FairSelectAsync_OffersTakenWhileOwnerIsWaking_NoPartnerFailsNoValueLost()
    {
        const int readers = 6;
        var c = new One2AnyChannel<int>();
        var d = new One2OneChannel<int>();
        long reads = 0;
        long offers = 0;
        long selections = 0;
        var par = new Parallel();
        for (int r = 0; r < readers; r++)
        {
            par.AddProcess(() =>
            {
                try
                {
                    foreach (int v in c.ReadAll())
                    {
                        Interlocked.Increment(ref reads);
                    }
                }
                catch
                {
                    c.Poison();
                    d.Poison();
                    throw;
                }
            });
        }

        par.AddProcess(() =>
        {
            try
            {
                while (true)
                {
                    d.Write(1);
                }
            }
            catch (PoisonException)
            {
            }
        });

        par.AddProcess(async ct =>
        {
            var alt = new Alternative(c.Out, d.In);
            long deadline = Stopwatch.GetTimestamp() + (4 * Stopwatch.Frequency);
            try
            {
                for (int n = 0; Stopwatch.GetTimestamp() < deadline; n++)
                {
                    c.Out.Offer(n);
                    if (await alt.FairSelectAsync(ct) == 0)
                    {
                        offers++;
                    }
                    else
                    {
                        d.In.Read();
                    }

                    selections++;
                }
            }
            finally
            {
                c.Poison();
                d.Poison();
            }
        });

        await par.RunAsync();
        output.WriteLine($"{selections:N0} selections, {offers:N0} offers taken, {Interlocked.Read(ref reads):N0} reads");
        Assert.Equal(offers, Interlocked.Read(ref reads));
    }
}

/// <summary>
/// One stress run. Channels (every kind, buffered and not):
/// c0 Any2Any, c1 Any2Any(32), c2 Any2One(8), c3 One2Any, c4 One2One(16), c5 Any2One, c6 One2Any(4).
/// </summary>
/// <remarks>
/// <para>Writers, each sending its own range of distinct items:</para>
/// <list type="bullet">
/// <item>W0 thread, plain writes to c0 and c2.</item>
/// <item>W1 async, plain writes to c1 and c5, cancelled at random and retried with the same item.</item>
/// <item>W2 thread, FairSelect/PriSelect over output guards on c0, c2, c5 (the item offered on all three).</item>
/// <item>W3 async, PriSelectAsync/FairSelectAsync over output guards on c1, c5, the select cancelled at random and retried.</item>
/// <item>W4 thread, sole writer of c3 and c4, PriSelect over output guards on both.</item>
/// <item>W5 async, sole writer of c6, FairSelectAsync over output guards on c6 and c1, cancelled at random; every eighth item a plain cancellable WriteAsync to c6.</item>
/// <item>W6 thread, plain writes to c0 and c1.</item>
/// </list>
/// <para>Readers:</para>
/// <list type="bullet">
/// <item>R0 thread FairSelect over c2, c4 (its only reader), c0, c3.</item>
/// <item>R1 async PriSelectAsync/FairSelectAsync over c5 (its only reader), c1, c6, c0; selects cancelled at random, also by writers (racing with commits).</item>
/// <item>R2 thread PriSelect over c1, c3, c6; every 16th select first polls through a second alternative over the same ends plus Skip (ends move between alternatives).</item>
/// <item>R3 async FairSelectAsync over c0, c1, c3, c6 and a timer.</item>
/// <item>Plain readers: P0 thread on c0, P1 async on c3, P2 async on c1 with random cancellation, P3 thread on c6.</item>
/// </list>
/// <para>
/// When every writer has finished, all channels are poisoned. Plain readers stop on poison;
/// alternating readers switch a poisoned guard off with its precondition (buffers are drained
/// first) and stop when every channel guard is off.
/// </para>
/// </remarks>
internal sealed class AltStressRun(int itemsPerWriter, int seed)
{
    private const int WriterCount = 7;
    private const int ReaderCount = 4;

    private readonly CspChannel<int> _c0 = new Any2AnyChannel<int>();
    private readonly CspChannel<int> _c1 = new Any2AnyChannel<int>(new FifoBuffer<int>(32));
    private readonly CspChannel<int> _c2 = new Any2OneChannel<int>(new FifoBuffer<int>(8));
    private readonly CspChannel<int> _c3 = new One2AnyChannel<int>();
    private readonly CspChannel<int> _c4 = new One2OneChannel<int>(new FifoBuffer<int>(16));
    private readonly CspChannel<int> _c5 = new Any2OneChannel<int>();
    private readonly CspChannel<int> _c6 = new One2AnyChannel<int>(new FifoBuffer<int>(4));
    private readonly ItemCounter _counter = new(WriterCount * itemsPerWriter);
    private readonly CancellationTokenSource?[] _readerTokens = new CancellationTokenSource?[ReaderCount];
    private int _writersLeft = WriterCount;
    private long _inputSelections;
    private long _outputSelections;
    private long _cancelledSelects;
    private long _cancelledWrites;
    private long _skips;
    private long _timeouts;

    internal sealed record Result(
        ItemCounter Counter,
        long InputSelections,
        long OutputSelections,
        long CancelledSelects,
        long CancelledWrites,
        long Skips,
        long Timeouts,
        double Seconds,
        int Seed)
    {
        public override string ToString() =>
            $"seed {Seed}: {InputSelections + OutputSelections:N0} selections ({InputSelections:N0} input, {OutputSelections:N0} output, " +
            $"{Skips:N0} skips, {Timeouts:N0} timeouts), {Counter.Total:N0} items read, {CancelledSelects:N0} cancelled selects, " +
            $"{CancelledWrites:N0} cancelled writes, {Seconds:F1} s";
    }

    private CspChannel<int>[] All => [_c0, _c1, _c2, _c3, _c4, _c5, _c6];

    internal async Task<Result> RunAsync()
    {
        long start = Stopwatch.GetTimestamp();
        var par = new Parallel();
        var processes = new FailFastProcesses(par, PoisonAll);
        processes.AddThread(W0);
        processes.AddAsync(W1);
        processes.AddThread(W2);
        processes.AddAsync(W3);
        processes.AddThread(W4);
        processes.AddAsync(W5);
        processes.AddThread(W6);
        processes.AddThread(R0);
        processes.AddAsync(R1);
        processes.AddThread(R2);
        processes.AddAsync(R3);
        processes.AddThread(() => PlainThreadReader(_c0));
        processes.AddAsync(() => PlainAsyncReader(_c3, cancelAtRandom: false, 11));
        processes.AddAsync(() => PlainAsyncReader(_c1, cancelAtRandom: true, 12));
        processes.AddThread(() => PlainThreadReader(_c6));
        await par.RunAsync();

        return new Result(
            _counter,
            Interlocked.Read(ref _inputSelections),
            Interlocked.Read(ref _outputSelections),
            Interlocked.Read(ref _cancelledSelects),
            Interlocked.Read(ref _cancelledWrites),
            Interlocked.Read(ref _skips),
            Interlocked.Read(ref _timeouts),
            AltTime.MillisecondsSince(start) / 1000.0,
            seed);
    }

    private void PoisonAll()
    {
        foreach (CspChannel<int> channel in All)
        {
            channel.Poison();
        }
    }

    private int First(int writer) => writer * itemsPerWriter;

    private int End(int writer) => (writer + 1) * itemsPerWriter;

    private void WriterDone()
    {
        if (Interlocked.Decrement(ref _writersLeft) == 0)
        {
            PoisonAll();
        }
    }

    /// <summary>Cancels a random alternating reader's current select now and then, racing with its commit.</summary>
    private void MaybeCancelReader(Random random)
    {
        if (random.Next(16) == 0)
        {
            Volatile.Read(ref _readerTokens[random.Next(ReaderCount)])?.Cancel();
        }
    }

    // ---- writers -----------------------------------------------------------------------------

    private void W0()
    {
        var random = new Random(seed + 0);
        for (int v = First(0); v < End(0); v++)
        {
            MaybeCancelReader(random);
            (v % 2 == 0 ? _c0 : _c2).Write(v);
        }

        WriterDone();
    }

    private async Task W1()
    {
        var random = new Random(seed + 1);
        for (int v = First(1); v < End(1); v++)
        {
            MaybeCancelReader(random);
            CspChannel<int> target = v % 2 == 0 ? _c1 : _c5;
            Interlocked.Add(ref _cancelledWrites, await RandomCancel.WriteAsync(ct => target.WriteAsync(v, ct), random, 4));
        }

        WriterDone();
    }

    private void W2()
    {
        AltingChannelOut<int> o0 = _c0.CreateOut();
        AltingChannelOut<int> o2 = _c2.CreateOut();
        AltingChannelOut<int> o5 = _c5.CreateOut();
        var alt = new Alternative(o0, o2, o5);
        long selections = 0;
        for (int v = First(2); v < End(2); v++)
        {
            o0.Offer(v);
            o2.Offer(v);
            o5.Offer(v);
            _ = v % 3 == 0 ? alt.PriSelect() : alt.FairSelect();
            selections++;
        }

        Interlocked.Add(ref _outputSelections, selections);
        WriterDone();
    }

    private async Task W3()
    {
        var random = new Random(seed + 3);
        AltingChannelOut<int> o1 = _c1.CreateOut();
        AltingChannelOut<int> o5 = _c5.CreateOut();
        var alt = new Alternative(o1, o5);
        long selections = 0;
        for (int v = First(3); v < End(3); v++)
        {
            o1.Offer(v);
            o5.Offer(v);
            while (true)
            {
                var cts = new CancellationTokenSource();
                ValueTask<int> select = v % 2 == 0 ? alt.PriSelectAsync(cts.Token) : alt.FairSelectAsync(cts.Token);
                if (!select.IsCompleted && random.Next(4) == 0)
                {
                    cts.Cancel();
                }

                try
                {
                    await select;
                    selections++;
                    break;
                }
                catch (OperationCanceledException)
                {
                    Interlocked.Increment(ref _cancelledSelects);
                }
            }
        }

        Interlocked.Add(ref _outputSelections, selections);
        WriterDone();
    }

    private void W4()
    {
        AltingChannelOut<int> o3 = _c3.Out;
        AltingChannelOut<int> o4 = _c4.Out;
        var alt = new Alternative(o3, o4);
        long selections = 0;
        for (int v = First(4); v < End(4); v++)
        {
            o3.Offer(v);
            o4.Offer(v);
            alt.PriSelect();
            selections++;
        }

        Interlocked.Add(ref _outputSelections, selections);
        WriterDone();
    }

    private async Task W5()
    {
        var random = new Random(seed + 5);
        AltingChannelOut<int> o6 = _c6.Out;
        AltingChannelOut<int> o1 = _c1.CreateOut();
        var alt = new Alternative(o6, o1);
        long selections = 0;
        for (int v = First(5); v < End(5); v++)
        {
            while (true)
            {
                var cts = new CancellationTokenSource();
                try
                {
                    if (v % 8 == 0)
                    {
                        ValueTask write = o6.WriteAsync(v, cts.Token);
                        if (!write.IsCompleted && random.Next(2) == 0)
                        {
                            cts.Cancel();
                        }

                        await write;
                    }
                    else
                    {
                        o6.Offer(v);
                        o1.Offer(v);
                        ValueTask<int> select = alt.FairSelectAsync(cts.Token);
                        if (!select.IsCompleted && random.Next(8) == 0)
                        {
                            cts.Cancel();
                        }

                        await select;
                        selections++;
                    }

                    break;
                }
                catch (OperationCanceledException)
                {
                    Interlocked.Increment(ref _cancelledSelects);
                }
            }
        }

        Interlocked.Add(ref _outputSelections, selections);
        WriterDone();
    }

    private void W6()
    {
        var random = new Random(seed + 6);
        for (int v = First(6); v < End(6); v++)
        {
            MaybeCancelReader(random);
            (v % 2 == 0 ? _c0 : _c1).Write(v);
        }

        WriterDone();
    }

    // ---- readers ------------------------------------------------------------------------------

    private void R0()
    {
        AltingChannelIn<int>[] ins = [_c2.In, _c4.In, _c0.CreateIn(), _c3.CreateIn()];
        var alt = new Alternative(ins);
        bool[] open = [true, true, true, true];
        long selections = 0;
        while (open.Any(o => o))
        {
            int i = alt.FairSelect(open);
            selections++;
            ReadInto(ins, i, open);
        }

        Interlocked.Add(ref _inputSelections, selections);
    }

    private async Task R1()
    {
        const int me = 1;
        var random = new Random(seed + 101);
        AltingChannelIn<int>[] ins = [_c5.In, _c1.CreateIn(), _c6.CreateIn(), _c0.CreateIn()];
        var alt = new Alternative(ins);
        bool[] open = [true, true, true, true];
        long selections = 0;
        int n = 0;
        while (open.Any(o => o))
        {
            var cts = new CancellationTokenSource();
            Volatile.Write(ref _readerTokens[me], cts);
            int i;
            try
            {
                ValueTask<int> select = n++ % 2 == 0 ? alt.PriSelectAsync(open, cts.Token) : alt.FairSelectAsync(open, cts.Token);
                if (!select.IsCompleted && random.Next(8) == 0)
                {
                    cts.Cancel();
                }

                i = await select;
            }
            catch (OperationCanceledException)
            {
                Interlocked.Increment(ref _cancelledSelects);
                continue;
            }

            selections++;
            await ReadIntoAsync(ins, i, open);
        }

        Interlocked.Add(ref _inputSelections, selections);
    }

    private void R2()
    {
        AltingChannelIn<int>[] ins = [_c1.CreateIn(), _c3.CreateIn(), _c6.CreateIn()];
        var alt = new Alternative(ins);
        var poll = new Alternative([.. ins, new Skip()]);
        bool[] open = [true, true, true];
        long selections = 0;
        long skips = 0;
        int n = 0;
        while (open.Any(o => o))
        {
            int i;
            if (n++ % 16 == 0)
            {
                i = poll.PriSelect([.. open, true]);
                selections++;
                if (i == ins.Length)
                {
                    skips++;
                    continue;
                }
            }
            else
            {
                i = alt.PriSelect(open);
                selections++;
            }

            ReadInto(ins, i, open);
        }

        Interlocked.Add(ref _inputSelections, selections);
        Interlocked.Add(ref _skips, skips);
    }

    private async Task R3()
    {
        const int me = 3;
        AltingChannelIn<int>[] ins = [_c0.CreateIn(), _c1.CreateIn(), _c3.CreateIn(), _c6.CreateIn()];
        var timer = new CSTimer();
        var alt = new Alternative([.. ins, timer]);
        bool[] open = [true, true, true, true, true];
        long selections = 0;
        long timeouts = 0;
        while (open.Take(ins.Length).Any(o => o))
        {
            var cts = new CancellationTokenSource();
            Volatile.Write(ref _readerTokens[me], cts);
            timer.RelativeTimeOut(20);
            int i;
            try
            {
                i = await alt.FairSelectAsync(open, cts.Token);
            }
            catch (OperationCanceledException)
            {
                Interlocked.Increment(ref _cancelledSelects);
                continue;
            }

            selections++;
            if (i == ins.Length)
            {
                timeouts++;
                continue;
            }

            await ReadIntoAsync(ins, i, open);
        }

        Interlocked.Add(ref _inputSelections, selections);
        Interlocked.Add(ref _timeouts, timeouts);
    }

    private void ReadInto(AltingChannelIn<int>[] ins, int i, bool[] open)
    {
        try
        {
            _counter.Count(ins[i].Read());
        }
        catch (PoisonException)
        {
            open[i] = false;
        }
    }

    private async ValueTask ReadIntoAsync(AltingChannelIn<int>[] ins, int i, bool[] open)
    {
        ValueTask<int> read = ins[i].ReadAsync();
        if (!read.IsCompleted)
        {
            _counter.Violation($"After a select chose guard {i}, its ReadAsync did not complete at once.");
        }

        try
        {
            _counter.Count(await read);
        }
        catch (PoisonException)
        {
            open[i] = false;
        }
    }

    private void PlainThreadReader(CspChannel<int> channel)
    {
        foreach (int v in channel.ReadAll())
        {
            _counter.Count(v);
        }
    }

    private async Task PlainAsyncReader(CspChannel<int> channel, bool cancelAtRandom, int id)
    {
        var random = new Random(seed + id);
        while (true)
        {
            var cts = new CancellationTokenSource();
            ValueTask<int> read = channel.ReadAsync(cancelAtRandom ? cts.Token : CancellationToken.None);
            if (cancelAtRandom && !read.IsCompleted && random.Next(4) == 0)
            {
                cts.Cancel();
            }

            try
            {
                _counter.Count(await read);
            }
            catch (OperationCanceledException)
            {
            }
            catch (PoisonException)
            {
                return;
            }
        }
    }
}
