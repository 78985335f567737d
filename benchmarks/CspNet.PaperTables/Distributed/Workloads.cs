using System.Buffers.Binary;

namespace CspNet.PaperTables.Distributed;

/// <summary>The computations the distributed tables farm out: Monte Carlo pi (paper 001) and Mandelbrot rows (paper 002).</summary>
internal static class Workloads
{
    /// <summary>Points of <paramref name="iterations"/> random throws that fall inside the unit circle (xorshift64*, seeded).</summary>
    internal static long PiHits(long iterations, ulong seed)
    {
        ulong state = seed | 1;
        long hits = 0;
        for (long i = 0; i < iterations; i++)
        {
            double x = Next(ref state), y = Next(ref state);
            if ((x * x) + (y * y) <= 1.0)
            {
                hits++;
            }
        }

        return hits;
    }

    private static double Next(ref ulong state)
    {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return ((state * 0x2545F4914F6CDD1DUL) >> 11) * (1.0 / (1UL << 53));
    }

    /// <summary>The escape-time limit of the Mandelbrot rows.</summary>
    internal const int MaxEscape = 255;

    /// <summary>
    /// One row of a <paramref name="width"/> x <paramref name="height"/> image of the region
    /// [-2.5, 1] x [-1, 1]: 4 bytes (the escape count) per data point, as paper 002 counts them.
    /// </summary>
    internal static byte[] MandelbrotRow(int row, int width, int height)
    {
        var result = new byte[4 * width];
        double y = -1.0 + (2.0 * row / height);
        for (int column = 0; column < width; column++)
        {
            double x = -2.5 + (3.5 * column / width);
            double zx = 0, zy = 0;
            int n = 0;
            while (n < MaxEscape && (zx * zx) + (zy * zy) <= 4.0)
            {
                double next = (zx * zx) - (zy * zy) + x;
                zy = (2 * zx * zy) + y;
                zx = next;
                n++;
            }

            BinaryPrimitives.WriteInt32LittleEndian(result.AsSpan(4 * column), n);
        }

        return result;
    }

    /// <summary>A job of the Mandelbrot farm: the row, the image's size (a row of -1: stop).</summary>
    internal static byte[] MandelbrotJob(int row, int width, int height)
    {
        var job = new byte[12];
        BinaryPrimitives.WriteInt32LittleEndian(job, row);
        BinaryPrimitives.WriteInt32LittleEndian(job.AsSpan(4), width);
        BinaryPrimitives.WriteInt32LittleEndian(job.AsSpan(8), height);
        return job;
    }

    internal static (int Row, int Width, int Height) ReadMandelbrotJob(byte[] job) =>
        (BinaryPrimitives.ReadInt32LittleEndian(job), BinaryPrimitives.ReadInt32LittleEndian(job.AsSpan(4)), BinaryPrimitives.ReadInt32LittleEndian(job.AsSpan(8)));
}
