using System.Buffers.Binary;
using System.IO.Compression;
using System.Text;

/// <summary>
/// A minimal PNG encoder: 8-bit RGB, no interlacing, every scanline with filter "None", the pixel
/// data compressed with zlib (RFC 1950) as the format requires. Enough for any image viewer.
/// </summary>
static class Png
{
    private static readonly byte[] Signature = [0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A];

    /// <summary>Writes <paramref name="rgb"/> (3 bytes per pixel, row by row from the top) as a PNG file.</summary>
    public static void Write(string path, int width, int height, byte[] rgb)
    {
        if (rgb.Length != checked(width * height * 3))
        {
            throw new ArgumentException($"Expected {width * height * 3} bytes for {width}x{height} RGB, got {rgb.Length}.", nameof(rgb));
        }

        using FileStream file = File.Create(path);
        file.Write(Signature);

        // IHDR: size, bit depth 8, colour type 2 (RGB), compression 0, filter 0, no interlace.
        var header = new byte[13];
        BinaryPrimitives.WriteInt32BigEndian(header, width);
        BinaryPrimitives.WriteInt32BigEndian(header.AsSpan(4), height);
        header[8] = 8;
        header[9] = 2;
        WriteChunk(file, "IHDR", header);

        // IDAT: each scanline is a filter-type byte (0: None) and the row's pixels.
        using (var compressed = new MemoryStream())
        {
            using (var zlib = new ZLibStream(compressed, CompressionLevel.Fastest, leaveOpen: true))
            {
                int stride = width * 3;
                for (int y = 0; y < height; y++)
                {
                    zlib.WriteByte(0);
                    zlib.Write(rgb, y * stride, stride);
                }
            }

            WriteChunk(file, "IDAT", compressed.GetBuffer().AsSpan(0, (int)compressed.Length));
        }

        WriteChunk(file, "IEND", []);
    }

    /// <summary>A chunk: data length (big-endian), 4-letter type, data, CRC-32 of type and data.</summary>
    private static void WriteChunk(Stream stream, string type, ReadOnlySpan<byte> data)
    {
        Span<byte> word = stackalloc byte[4];
        BinaryPrimitives.WriteInt32BigEndian(word, data.Length);
        stream.Write(word);

        byte[] typeBytes = Encoding.ASCII.GetBytes(type);
        stream.Write(typeBytes);
        stream.Write(data);

        uint crc = Crc32.Update(Crc32.Initial, typeBytes);
        crc = Crc32.Update(crc, data);
        BinaryPrimitives.WriteUInt32BigEndian(word, Crc32.Finish(crc));
        stream.Write(word);
    }
}

/// <summary>
/// CRC-32 as PNG (and zip, gzip, Ethernet) use it: polynomial 0xEDB88320 (reflected), initial
/// value and final XOR 0xFFFFFFFF. System.IO.Hashing has one, but it is a separate package.
/// </summary>
static class Crc32
{
    public const uint Initial = 0xFFFFFFFF;

    private static readonly uint[] Table = BuildTable();

    public static uint Update(uint crc, ReadOnlySpan<byte> data)
    {
        foreach (byte b in data)
        {
            crc = Table[(crc ^ b) & 0xFF] ^ (crc >> 8);
        }

        return crc;
    }

    public static uint Finish(uint crc) => crc ^ 0xFFFFFFFF;

    /// <summary>The CRC-32 of <paramref name="data"/>: for "123456789" it is 0xCBF43926.</summary>
    public static uint Compute(ReadOnlySpan<byte> data) => Finish(Update(Initial, data));

    private static uint[] BuildTable()
    {
        var table = new uint[256];
        for (uint n = 0; n < 256; n++)
        {
            uint c = n;
            for (int k = 0; k < 8; k++)
            {
                c = (c & 1) != 0 ? 0xEDB88320 ^ (c >> 1) : c >> 1;
            }

            table[n] = c;
        }

        return table;
    }
}
