using System.Runtime.CompilerServices;

/// <summary>
/// The picture to compute: which part of the complex plane, at what size, how many iterations.
/// Everything a row or pixel process needs besides its coordinates.
/// </summary>
sealed class View
{
    public View(int width, int height, int maxIterations, double centerX = -0.75, double centerY = 0, double planeWidth = 3.5)
    {
        Width = width;
        Height = height;
        MaxIterations = maxIterations;
        Scale = planeWidth / width;
        Left = centerX - planeWidth / 2;
        Top = centerY + Scale * height / 2;
    }

    public int Width { get; }

    public int Height { get; }

    public int MaxIterations { get; }

    /// <summary>The size of a pixel in the complex plane.</summary>
    public double Scale { get; }

    public double Left { get; }

    public double Top { get; }

    /// <summary>The colour of pixel (<paramref name="x"/>, <paramref name="y"/>), as 0xRRGGBB.</summary>
    public int PixelColour(int x, int y) =>
        Palette.Colour(Mandelbrot.SmoothEscapeTime(Left + (x + 0.5) * Scale, Top - (y + 0.5) * Scale, MaxIterations));

    /// <summary>Computes row <paramref name="y"/> into <paramref name="rgb"/> (3 bytes per pixel).</summary>
    public void Row(int y, Span<byte> rgb)
    {
        for (int x = 0; x < Width; x++)
        {
            int colour = PixelColour(x, y);
            rgb[3 * x] = (byte)(colour >> 16);
            rgb[3 * x + 1] = (byte)(colour >> 8);
            rgb[3 * x + 2] = (byte)colour;
        }
    }
}

static class Mandelbrot
{
    /// <summary>
    /// Iterates z = z² + c from z = 0. Returns -1 if z stays bounded for
    /// <paramref name="maxIterations"/> iterations (c is in the set), else the iteration at which
    /// it escaped, made continuous (the "normalized iteration count") so that colours blend
    /// smoothly instead of in bands.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static double SmoothEscapeTime(double cx, double cy, int maxIterations)
    {
        // A large escape radius (here 2^8) makes the smoothing accurate.
        const double EscapeRadiusSquared = 256.0 * 256.0;
        double zx = 0, zy = 0, zx2 = 0, zy2 = 0;
        int n = 0;
        while (n < maxIterations && zx2 + zy2 <= EscapeRadiusSquared)
        {
            zy = 2 * zx * zy + cy;
            zx = zx2 - zy2 + cx;
            zx2 = zx * zx;
            zy2 = zy * zy;
            n++;
        }

        if (n == maxIterations)
        {
            return -1;
        }

        // log2(log|z|) grows by one per iteration once |z| is large: subtract it to smooth.
        return n + 1 - Math.Log2(Math.Log(zx2 + zy2) / 2);
    }
}

/// <summary>The colours: a smooth cyclic gradient for points outside the set, black inside.</summary>
static class Palette
{
    private const int Size = 256;
    private static readonly int[] Colours = Build();

    /// <summary>The colour, as 0xRRGGBB, of a smooth escape time (negative: inside the set).</summary>
    public static int Colour(double escapeTime)
    {
        if (escapeTime < 0)
        {
            return 0x000000;
        }

        // Square root: the escape time grows fast near the set, so slow the cycling down there.
        double position = Math.Sqrt(Math.Max(escapeTime, 0)) * 24;
        int index = (int)position;
        double fraction = position - index;
        return Blend(Colours[index % Size], Colours[(index + 1) % Size], fraction);
    }

    private static int[] Build()
    {
        // A cosine gradient (after Inigo Quilez) from dark blue through white and gold, back to blue.
        var colours = new int[Size];
        for (int i = 0; i < Size; i++)
        {
            double t = (double)i / Size;
            int r = Channel(0.5, 0.5, 1.0, 0.00, t);
            int g = Channel(0.5, 0.5, 1.0, 0.10, t);
            int b = Channel(0.5, 0.5, 1.0, 0.20, t);
            colours[i] = (r << 16) | (g << 8) | b;
        }

        return colours;
    }

    private static int Channel(double offset, double amplitude, double frequency, double phase, double t) =>
        (int)Math.Round(255 * Math.Clamp(offset + amplitude * Math.Cos(2 * Math.PI * (frequency * t + phase + 0.5)), 0, 1));

    private static int Blend(int a, int b, double f)
    {
        int Mix(int shift) => (int)Math.Round(((a >> shift) & 0xFF) * (1 - f) + ((b >> shift) & 0xFF) * f);
        return (Mix(16) << 16) | (Mix(8) << 8) | Mix(0);
    }
}
