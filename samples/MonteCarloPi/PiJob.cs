using System.Runtime.CompilerServices;

/// <summary>Which random number generator the workers use.</summary>
enum RngKind
{
    /// <summary>xoshiro256** seeded through SplitMix64: a few nanoseconds per point, excellent statistical quality.</summary>
    Xoshiro,

    /// <summary><c>new System.Random(seed)</c>, as in the paper's listings 7 and 8: about 3-4 times slower per point.</summary>
    System,
}

/// <summary>
/// Everything one worker needs, and nothing else: how many points to throw and from which seed.
/// A worker depends only on this, so a later distributed mode can ship it to another machine as
/// it is (the paper's <c>DistControl</c>, listing 9) and get back one number, the count.
/// </summary>
readonly record struct WorkItem(long Iterations, int Seed, RngKind Rng);

/// <summary>
/// The split and the merge, in one place: how the total number of points is divided among the
/// workers, and how their counts combine into an estimate of pi.
/// </summary>
sealed class PiJob
{
    public PiJob(long iterations, int seed, RngKind rng)
    {
        Iterations = iterations;
        Seed = seed;
        Rng = rng;
    }

    public long Iterations { get; }

    public int Seed { get; }

    public RngKind Rng { get; }

    /// <summary>
    /// Divides the points among <paramref name="workers"/> workers; the first ones take one point
    /// more when the division is not exact. Worker i uses seed Seed + i, so one worker repeats the
    /// sequential run exactly, and a run is the same whether its workers are threads or async.
    /// </summary>
    public WorkItem[] Split(int workers)
    {
        var items = new WorkItem[workers];
        long share = Iterations / workers;
        long remainder = Iterations % workers;
        for (int i = 0; i < workers; i++)
        {
            items[i] = new WorkItem(share + (i < remainder ? 1 : 0), unchecked(Seed + i), Rng);
        }

        return items;
    }

    /// <summary>Combines the workers' counts of points inside the unit circle: pi is about 4 * inside / total.</summary>
    public PiEstimate Merge(long inside) => new(inside, Iterations, 4.0 * inside / Iterations);
}

/// <summary>The result: points inside the circle, points thrown, and the estimate of pi.</summary>
readonly record struct PiEstimate(long Inside, long Total, double Pi)
{
    public double Error => Math.Abs(Pi - Math.PI);
}

/// <summary>The computation itself (the loop of the paper's listing 7), with no concurrency in it.</summary>
static class MonteCarlo
{
    /// <summary>Throws <see cref="WorkItem.Iterations"/> random points into the square [-1, 1)² and counts those inside the unit circle.</summary>
    public static long CountInside(WorkItem work) =>
        work.Rng == RngKind.System ? CountInsideSystemRandom(work.Iterations, work.Seed) : CountInsideXoshiro(work.Iterations, work.Seed);

    // Optimised from the first call: each worker calls this once, and its whole run is this loop.
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static long CountInsideXoshiro(long iterations, int seed)
    {
        var rng = new Xoshiro256StarStar((ulong)(uint)seed);
        long inside = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = rng.NextDouble() * 2.0 - 1.0;
            double y = rng.NextDouble() * 2.0 - 1.0;
            if (x * x + y * y < 1.0)
            {
                inside++;
            }
        }

        return inside;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static long CountInsideSystemRandom(long iterations, int seed)
    {
        var random = new Random(seed);
        long inside = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = random.NextDouble() * 2.0 - 1.0;
            double y = random.NextDouble() * 2.0 - 1.0;
            if (x * x + y * y < 1.0)
            {
                inside++;
            }
        }

        return inside;
    }
}

/// <summary>
/// xoshiro256** (Blackman and Vigna), the generator behind an unseeded System.Random, here as a
/// struct a worker keeps in registers. Seeds are spread by SplitMix64, so neighbouring seeds
/// (Seed, Seed + 1, ...) give unrelated streams.
/// </summary>
struct Xoshiro256StarStar
{
    private ulong s0, s1, s2, s3;

    public Xoshiro256StarStar(ulong seed)
    {
        s0 = SplitMix64(ref seed);
        s1 = SplitMix64(ref seed);
        s2 = SplitMix64(ref seed);
        s3 = SplitMix64(ref seed);
    }

    /// <summary>A double in [0, 1) with 53 random bits.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public double NextDouble() => (NextUInt64() >> 11) * (1.0 / (1UL << 53));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ulong NextUInt64()
    {
        ulong result = ulong.RotateLeft(s1 * 5, 7) * 9;
        ulong t = s1 << 17;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = ulong.RotateLeft(s3, 45);
        return result;
    }

    private static ulong SplitMix64(ref ulong state)
    {
        ulong z = state += 0x9E3779B97F4A7C15;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
        return z ^ (z >> 31);
    }
}
