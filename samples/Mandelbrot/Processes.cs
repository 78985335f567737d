/// <summary>One computed row: its index and its pixels, 3 bytes (R, G, B) each.</summary>
readonly record struct RowResult(int Y, byte[] Rgb);

/// <summary>One computed pixel: its position and colour (0xRRGGBB).</summary>
readonly record struct PixelResult(int X, int Y, int Colour);

/// <summary>
/// Computes one row of the picture and sends it to the collector. An async process
/// (<c>par.AddProcess(row)</c>); <see cref="Run"/> is the same as a thread process
/// (<c>par.AddProcess(row.Run)</c>).
/// </summary>
class RowProcess : IAsyncCSPProcess
{
    private readonly View view;
    private readonly int y;
    private readonly IChannelOut<RowResult> output;

    public RowProcess(View view, int y, IChannelOut<RowResult> output)
    {
        this.view = view;
        this.y = y;
        this.output = output;
    }

    public Task RunAsync(CancellationToken cancellationToken) => output.WriteAsync(Compute(), cancellationToken).AsTask();

    public void Run() => output.Write(Compute());

    private RowResult Compute()
    {
        var rgb = new byte[view.Width * 3];
        view.Row(y, rgb);
        return new RowResult(y, rgb);
    }
}

/// <summary>Computes one pixel and sends it to the collector: the finest grain, one process per pixel.</summary>
class PixelProcess : IAsyncCSPProcess
{
    private readonly View view;
    private readonly int x;
    private readonly int y;
    private readonly IChannelOut<PixelResult> output;

    public PixelProcess(View view, int x, int y, IChannelOut<PixelResult> output)
    {
        this.view = view;
        this.x = x;
        this.y = y;
        this.output = output;
    }

    public Task RunAsync(CancellationToken cancellationToken) =>
        output.WriteAsync(new PixelResult(x, y, view.PixelColour(x, y)), cancellationToken).AsTask();

    public void Run() => output.Write(new PixelResult(x, y, view.PixelColour(x, y)));
}

/// <summary>
/// Reads every row (or every pixel) from the channel all the workers share and puts it in the
/// picture, reporting progress as it goes. Knows how many to expect, so it needs no poison.
/// </summary>
class Collector
{
    private readonly View view;
    private readonly ProgressLine progress;

    public Collector(View view, ProgressLine progress)
    {
        this.view = view;
        this.progress = progress;
        Rgb = new byte[view.Width * view.Height * 3];
    }

    /// <summary>The picture, 3 bytes per pixel, row by row from the top.</summary>
    public byte[] Rgb { get; }

    public async Task CollectRowsAsync(IChannelIn<RowResult> rows, CancellationToken cancellationToken)
    {
        for (int i = 1; i <= view.Height; i++)
        {
            Put(await rows.ReadAsync(cancellationToken));
            progress.Report(i);
        }
    }

    public void CollectRows(IChannelIn<RowResult> rows)
    {
        for (int i = 1; i <= view.Height; i++)
        {
            Put(rows.Read());
            progress.Report(i);
        }
    }

    public async Task CollectPixelsAsync(IChannelIn<PixelResult> pixels, CancellationToken cancellationToken)
    {
        int count = view.Width * view.Height;
        for (int i = 1; i <= count; i++)
        {
            Put(await pixels.ReadAsync(cancellationToken));
            progress.Report(i);
        }
    }

    public void CollectPixels(IChannelIn<PixelResult> pixels)
    {
        int count = view.Width * view.Height;
        for (int i = 1; i <= count; i++)
        {
            Put(pixels.Read());
            progress.Report(i);
        }
    }

    private void Put(RowResult row) => row.Rgb.CopyTo(Rgb, row.Y * view.Width * 3);

    private void Put(PixelResult pixel)
    {
        int offset = (pixel.Y * view.Width + pixel.X) * 3;
        Rgb[offset] = (byte)(pixel.Colour >> 16);
        Rgb[offset + 1] = (byte)(pixel.Colour >> 8);
        Rgb[offset + 2] = (byte)pixel.Colour;
    }
}

/// <summary>A "computing: 42% (378/900 rows)" line, rewritten in place with \r at most ten times a second.</summary>
sealed class ProgressLine
{
    private static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(100);
    private readonly string what;
    private readonly int total;
    private readonly bool enabled;
    private long lastShown;

    public ProgressLine(string what, int total, bool enabled)
    {
        this.what = what;
        this.total = total;
        this.enabled = enabled;
    }

    public void Report(int done)
    {
        if (!enabled)
        {
            return;
        }

        long now = System.Diagnostics.Stopwatch.GetTimestamp();
        if (done < total && lastShown != 0 && System.Diagnostics.Stopwatch.GetElapsedTime(lastShown, now) < Interval)
        {
            return;
        }

        lastShown = now;
        Console.Write($"\r  computing: {100L * done / total,3}% ({done:N0}/{total:N0} {what})");
        if (done == total)
        {
            Console.WriteLine();
        }
    }
}
