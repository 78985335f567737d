using BenchmarkDotNet.Attributes;

namespace CspNet.Benchmarks;

/// <summary>
/// The cost of one <see cref="Alternative"/> selection over <see cref="GuardCount"/> guards of
/// which exactly one is always ready, the other <c>GuardCount - 1</c> being input ends of idle
/// unbuffered <see cref="One2OneChannel{T}"/>s (nobody ever writes to them). Everything runs on
/// the benchmark thread; <see cref="Ops"/> selections per invocation, times reported per
/// selection (<c>OperationsPerInvoke</c>).
/// </summary>
/// <remarks>
/// <para>
/// Buffered variants: the ready guard is the input end of a <see cref="One2OneChannel{T}"/> with
/// a <c>FifoBuffer(1)</c>. Each operation writes one item into that channel (the buffer accepts
/// it at once and the channel pushes readiness to the alternative), selects, checks that the
/// buffered guard was chosen and reads the held value. The baseline does the same write and read
/// on an identical channel that no alternative watches, so <c>Ratio</c> is (write + select +
/// read) / (write + read) and the select's own cost is roughly <c>Mean - baseline Mean</c>.
/// </para>
/// <para>
/// Skip variants: the ready guard is a <see cref="Skip"/>; each operation is one selection and
/// nothing else (their <c>Ratio</c> is still relative to the buffered write + read baseline).
/// </para>
/// <para>
/// Placement: for <see cref="Alternative.PriSelect()"/> the ready guard is last, behind every
/// idle guard (the worst case for priority order). For <see cref="Alternative.FairSelect()"/> it
/// is first: a fair selection starts after the guard it chose last time, so the search begins
/// at index 1 and wraps round the whole array before it reaches index 0 (the worst case for
/// fair order too). Each variant has its own channels and alternative.
/// </para>
/// </remarks>
[MemoryDiagnoser]
[MinColumn]
[MedianColumn]
[SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 8)]
public class SelectBenchmarks
{
    /// <summary>Selections (or baseline write + read pairs) per benchmark invocation.</summary>
    public const int Ops = 10_000;

    private One2OneChannel<int> _plain = null!;
    private AltingChannelIn<int> _plainIn = null!;

    private One2OneChannel<int> _priBuffered = null!;
    private AltingChannelIn<int> _priBufferedIn = null!;
    private Alternative _priBufferedAlt = null!;
    private int _priBufferedIndex;

    private One2OneChannel<int> _fairBuffered = null!;
    private AltingChannelIn<int> _fairBufferedIn = null!;
    private Alternative _fairBufferedAlt = null!;

    private Alternative _priSkipAlt = null!;
    private int _priSkipIndex;

    private Alternative _fairSkipAlt = null!;

    /// <summary>Number of guards in the alternative: one always ready, the rest idle input ends.</summary>
    [Params(2, 10, 100)]
    public int GuardCount { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _plain = new One2OneChannel<int>(new FifoBuffer<int>(1));
        _plainIn = _plain.In;

        _priBuffered = new One2OneChannel<int>(new FifoBuffer<int>(1));
        _priBufferedIn = _priBuffered.In;
        _priBufferedIndex = GuardCount - 1;
        _priBufferedAlt = new Alternative([.. IdleGuards(GuardCount - 1), _priBufferedIn]);

        _fairBuffered = new One2OneChannel<int>(new FifoBuffer<int>(1));
        _fairBufferedIn = _fairBuffered.In;
        _fairBufferedAlt = new Alternative([_fairBufferedIn, .. IdleGuards(GuardCount - 1)]);

        _priSkipIndex = GuardCount - 1;
        _priSkipAlt = new Alternative([.. IdleGuards(GuardCount - 1), new Skip()]);

        _fairSkipAlt = new Alternative([new Skip(), .. IdleGuards(GuardCount - 1)]);

        // One selection each, so that activation (registering the input ends with their channels)
        // happens here and not in the first measured invocation.
        PriSelectBufferedLast();
        FairSelectBufferedFirst();
        PriSelectSkipLast();
        FairSelectSkipFirst();
    }

    /// <summary>Write one item into a buffered channel and read it back; no alternation.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Ops)]
    public int BufferedWriteRead()
    {
        One2OneChannel<int> channel = _plain;
        AltingChannelIn<int> input = _plainIn;
        int sum = 0;
        for (int i = 0; i < Ops; i++)
        {
            channel.Write(i);
            sum += input.Read();
        }

        return sum;
    }

    /// <summary>Write into the buffered channel, PriSelect with its guard last, Read.</summary>
    [Benchmark(OperationsPerInvoke = Ops)]
    public int PriSelectBufferedLast()
    {
        One2OneChannel<int> channel = _priBuffered;
        AltingChannelIn<int> input = _priBufferedIn;
        Alternative alt = _priBufferedAlt;
        int expected = _priBufferedIndex;
        int sum = 0;
        for (int i = 0; i < Ops; i++)
        {
            channel.Write(i);
            int chosen = alt.PriSelect();
            if (chosen != expected)
            {
                WrongGuard(chosen, expected);
            }

            sum += input.Read();
        }

        return sum;
    }

    /// <summary>Write into the buffered channel, FairSelect with its guard first, Read.</summary>
    [Benchmark(OperationsPerInvoke = Ops)]
    public int FairSelectBufferedFirst()
    {
        One2OneChannel<int> channel = _fairBuffered;
        AltingChannelIn<int> input = _fairBufferedIn;
        Alternative alt = _fairBufferedAlt;
        int sum = 0;
        for (int i = 0; i < Ops; i++)
        {
            channel.Write(i);
            int chosen = alt.FairSelect();
            if (chosen != 0)
            {
                WrongGuard(chosen, 0);
            }

            sum += input.Read();
        }

        return sum;
    }

    /// <summary>PriSelect with a Skip last behind the idle guards.</summary>
    [Benchmark(OperationsPerInvoke = Ops)]
    public int PriSelectSkipLast()
    {
        Alternative alt = _priSkipAlt;
        int expected = _priSkipIndex;
        int sum = 0;
        for (int i = 0; i < Ops; i++)
        {
            int chosen = alt.PriSelect();
            if (chosen != expected)
            {
                WrongGuard(chosen, expected);
            }

            sum += chosen;
        }

        return sum;
    }

    /// <summary>FairSelect with a Skip first, before the idle guards.</summary>
    [Benchmark(OperationsPerInvoke = Ops)]
    public int FairSelectSkipFirst()
    {
        Alternative alt = _fairSkipAlt;
        int sum = 0;
        for (int i = 0; i < Ops; i++)
        {
            int chosen = alt.FairSelect();
            if (chosen != 0)
            {
                WrongGuard(chosen, 0);
            }

            sum += chosen;
        }

        return sum;
    }

    /// <summary>Input ends of fresh unbuffered channels that nobody writes to.</summary>
    private static Guard[] IdleGuards(int count)
    {
        var guards = new Guard[count];
        for (int i = 0; i < count; i++)
        {
            guards[i] = new One2OneChannel<int>().In;
        }

        return guards;
    }

    private static void WrongGuard(int chosen, int expected) =>
        throw new InvalidOperationException($"The selection chose guard {chosen}; only guard {expected} is ever ready.");
}
