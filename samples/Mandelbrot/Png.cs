using SkiaSharp;

/// <summary>Writes the picture as a PNG file, encoded by SkiaSharp (the library the benchmarks' charts draw with).</summary>
static class Png
{
    /// <summary>Writes <paramref name="rgb"/> (3 bytes per pixel, row by row from the top) as a PNG file.</summary>
    public static void Write(string path, int width, int height, byte[] rgb)
    {
        if (rgb.Length != checked(width * height * 3))
        {
            throw new ArgumentException($"Expected {width * height * 3} bytes for {width}x{height} RGB, got {rgb.Length}.", nameof(rgb));
        }

        // Skia has no 3-byte pixel format: each pixel gets an opaque fourth byte.
        using var bitmap = new SKBitmap(new SKImageInfo(width, height, SKColorType.Rgba8888, SKAlphaType.Opaque));
        Span<byte> pixels = bitmap.GetPixelSpan();
        for (int from = 0, to = 0; from < rgb.Length; from += 3, to += 4)
        {
            pixels[to] = rgb[from];
            pixels[to + 1] = rgb[from + 1];
            pixels[to + 2] = rgb[from + 2];
            pixels[to + 3] = 255;
        }

        using SKData png = bitmap.Encode(SKEncodedImageFormat.Png, quality: 100);
        using FileStream file = File.Create(path);
        png.SaveTo(file);
    }
}
