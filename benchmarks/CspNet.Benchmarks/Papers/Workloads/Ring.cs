using System.Threading.Channels;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// CSP.NET section 4.1, Table 1: process A sends an integer to B, B passes it to C, C sends it back
/// to A; A sends the next integer only when the previous one has come back. Three unbuffered
/// channels of one kind. <see cref="Count"/> integers per run; each integer is three
/// communications.
/// </summary>
internal sealed class Ring
{
    private readonly CspChannel<int> _ab;
    private readonly CspChannel<int> _bc;
    private readonly CspChannel<int> _ca;
    private readonly Channel<int> _stcAb = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcBc = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcCa = PaperChannels.CreateRendezvous();

    internal Ring(ChannelKind kind)
    {
        _ab = PaperChannels.Create(kind);
        _bc = PaperChannels.Create(kind);
        _ca = PaperChannels.Create(kind);

        Threads = new Parallel();
        Threads.AddProcess(() => A(Count));
        Threads.AddProcess(() => Pass(_ab, _bc, Count));
        Threads.AddProcess(() => Pass(_bc, _ca, Count));

        Async = new Parallel();
        Async.AddProcess(_ => AAsync(Count));
        Async.AddProcess(_ => PassAsync(_ab, _bc, Count));
        Async.AddProcess(_ => PassAsync(_bc, _ca, Count));

        Stc = new Parallel();
        Stc.AddProcess(_ => StcAAsync(Count));
        Stc.AddProcess(_ => StcPassAsync(_stcAb, _stcBc, Count));
        Stc.AddProcess(_ => StcPassAsync(_stcBc, _stcCa, Count));
    }

    /// <summary>Integers sent around the ring per run; read by the processes when a run starts.</summary>
    internal int Count { get; set; } = 500_000;

    /// <summary>A, B and C as thread processes (blocking Read/Write) on CSPThreadPool.Default.</summary>
    internal Parallel Threads { get; }

    /// <summary>A, B and C as async processes (ReadAsync/WriteAsync).</summary>
    internal Parallel Async { get; }

    /// <summary>Baseline: the same ring over System.Threading.Channels rendezvous channels, async loops.</summary>
    internal Parallel Stc { get; }

    private void A(int count)
    {
        for (int i = 0; i < count; i++)
        {
            _ab.Write(i);
            PaperChannels.Check(_ca.Read(), i, "Ring");
        }
    }

    private static void Pass(CspChannel<int> input, CspChannel<int> output, int count)
    {
        for (int i = 0; i < count; i++)
        {
            output.Write(input.Read());
        }
    }

    private async Task AAsync(int count)
    {
        for (int i = 0; i < count; i++)
        {
            await _ab.WriteAsync(i);
            PaperChannels.Check(await _ca.ReadAsync(), i, "Ring");
        }
    }

    private static async Task PassAsync(CspChannel<int> input, CspChannel<int> output, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await output.WriteAsync(await input.ReadAsync());
        }
    }

    private async Task StcAAsync(int count)
    {
        for (int i = 0; i < count; i++)
        {
            await _stcAb.Writer.WriteAsync(i);
            PaperChannels.Check(await _stcCa.Reader.ReadAsync(), i, "Ring");
        }
    }

    private static async Task StcPassAsync(Channel<int> input, Channel<int> output, int count)
    {
        for (int i = 0; i < count; i++)
        {
            await output.Writer.WriteAsync(await input.Reader.ReadAsync());
        }
    }
}
