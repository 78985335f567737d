using System.Threading.Channels;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// CommsTime (JVMCSP Table 2): Prefix(0) -> Delta -> Successor -> Prefix, and Delta -> Consumer.
/// Per iteration four communications (prefix->delta, delta->successor, delta->consumer,
/// successor->prefix). Delta outputs sequentially (successor first, then consumer), the common
/// "SeqDelta" form. Every process runs <see cref="Iterations"/> cycles, so a run ends by itself.
/// </summary>
internal sealed class CommsTime
{
    /// <summary>Communications per iteration.</summary>
    internal const int CommunicationsPerIteration = 4;

    private readonly One2OneChannel<int> _a = new(); // prefix -> delta
    private readonly One2OneChannel<int> _b = new(); // delta -> successor
    private readonly One2OneChannel<int> _c = new(); // successor -> prefix
    private readonly One2OneChannel<int> _d = new(); // delta -> consumer
    private readonly Channel<int> _stcA = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcB = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcC = PaperChannels.CreateRendezvous();
    private readonly Channel<int> _stcD = PaperChannels.CreateRendezvous();

    internal CommsTime()
    {
        Threads = new Parallel();
        Threads.AddProcess(() => Prefix(Iterations));
        Threads.AddProcess(() => Delta(Iterations));
        Threads.AddProcess(() => Successor(Iterations));
        Threads.AddProcess(() => Consumer(Iterations));

        Async = new Parallel();
        Async.AddProcess(_ => PrefixAsync(Iterations));
        Async.AddProcess(_ => DeltaAsync(Iterations));
        Async.AddProcess(_ => SuccessorAsync(Iterations));
        Async.AddProcess(_ => ConsumerAsync(Iterations));

        Stc = new Parallel();
        Stc.AddProcess(_ => StcPrefixAsync(Iterations));
        Stc.AddProcess(_ => StcDeltaAsync(Iterations));
        Stc.AddProcess(_ => StcSuccessorAsync(Iterations));
        Stc.AddProcess(_ => StcConsumerAsync(Iterations));
    }

    /// <summary>Cycles per run; read by the processes when a run starts.</summary>
    internal int Iterations { get; set; } = 100_000;

    internal Parallel Threads { get; }

    internal Parallel Async { get; }

    /// <summary>Baseline: the same network over System.Threading.Channels rendezvous channels.</summary>
    internal Parallel Stc { get; }

    private void Prefix(int n)
    {
        _a.Write(0);
        for (int i = 1; i < n; i++)
        {
            _a.Write(_c.Read());
        }

        _ = _c.Read();
    }

    private void Delta(int n)
    {
        for (int i = 0; i < n; i++)
        {
            int x = _a.Read();
            _b.Write(x);
            _d.Write(x);
        }
    }

    private void Successor(int n)
    {
        for (int i = 0; i < n; i++)
        {
            _c.Write(_b.Read() + 1);
        }
    }

    private void Consumer(int n)
    {
        for (int i = 0; i < n; i++)
        {
            PaperChannels.Check(_d.Read(), i, "CommsTime");
        }
    }

    private async Task PrefixAsync(int n)
    {
        await _a.WriteAsync(0);
        for (int i = 1; i < n; i++)
        {
            await _a.WriteAsync(await _c.ReadAsync());
        }

        _ = await _c.ReadAsync();
    }

    private async Task DeltaAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            int x = await _a.ReadAsync();
            await _b.WriteAsync(x);
            await _d.WriteAsync(x);
        }
    }

    private async Task SuccessorAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            await _c.WriteAsync(await _b.ReadAsync() + 1);
        }
    }

    private async Task ConsumerAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            PaperChannels.Check(await _d.ReadAsync(), i, "CommsTime");
        }
    }

    private async Task StcPrefixAsync(int n)
    {
        await _stcA.Writer.WriteAsync(0);
        for (int i = 1; i < n; i++)
        {
            await _stcA.Writer.WriteAsync(await _stcC.Reader.ReadAsync());
        }

        _ = await _stcC.Reader.ReadAsync();
    }

    private async Task StcDeltaAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            int x = await _stcA.Reader.ReadAsync();
            await _stcB.Writer.WriteAsync(x);
            await _stcD.Writer.WriteAsync(x);
        }
    }

    private async Task StcSuccessorAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            await _stcC.Writer.WriteAsync(await _stcB.Reader.ReadAsync() + 1);
        }
    }

    private async Task StcConsumerAsync(int n)
    {
        for (int i = 0; i < n; i++)
        {
            PaperChannels.Check(await _stcD.Reader.ReadAsync(), i, "CommsTime");
        }
    }
}
