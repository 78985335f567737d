using System.Text;
using CspNet.Internal;
using CspNet.Tests.Channels;

namespace CspNet.Tests.Alternation;

/// <summary>How a writer sends each value.</summary>
[Flags]
public enum WriteStyles
{
    /// <summary>A plain <c>Write</c>/<c>WriteAsync</c>.</summary>
    Plain = 1,

    /// <summary><c>Offer(v)</c>, then a fair selection over the offered output and an idle offered output (a channel nobody reads).</summary>
    Offer = 2,

    /// <summary><c>Offer(v)</c>, then a prioritised selection over the offered output and a short timer; the same value is offered again after a timeout.</summary>
    OfferWithTimer = 4,

    /// <summary>A reservation (<c>TryReserve</c>), filled with the value or given back before a plain write.</summary>
    Reserve = 8,
}

/// <summary>How a reader takes each value.</summary>
[Flags]
public enum ReadStyles
{
    /// <summary>A plain <c>Read</c>/<c>ReadAsync</c>.</summary>
    Plain = 1,

    /// <summary>A fair selection over an idle input and the reading end, then a read of the end.</summary>
    Select = 2,

    /// <summary>A prioritised selection over the reading end and a short timer, then a read; a timeout selects again.</summary>
    SelectWithTimer = 4,

    /// <summary>
    /// A hold (<c>TryHold</c>), committed (the value is read) or released (put back), before a plain
    /// read. For a reading end of one process only: a value another reader held and gave back
    /// comes after what was read meanwhile, which a reader of a shared end may see.
    /// </summary>
    Hold = 8,
}

/// <summary>
/// One buffered (or unbuffered) channel, its writers each sending their own increasing values and
/// its readers each recording what they took, every party a thread or async process of a
/// <see cref="Parallel"/> that picks a style at random (seeded) for each value. <see cref="Failure"/>
/// then checks the properties every CSP channel owes: each value read exactly once, and each
/// reader sees every writer's values in the order written.
/// </summary>
internal sealed class OrderedExchange
{
    private readonly CspChannel<int> _channel;
    private readonly int _perWriter;
    private readonly int _seed;
    private readonly List<int>[] _received;
    private readonly bool[] _writerAsync;
    private readonly bool[] _readerAsync;
    private readonly WriteStyles _writeStyles;
    private readonly ReadStyles _readStyles;

    internal OrderedExchange(
        CspChannel<int> channel, bool[] writerAsync, bool[] readerAsync, int perWriter, WriteStyles writeStyles, ReadStyles readStyles, int seed)
    {
        _channel = channel;
        _writerAsync = writerAsync;
        _readerAsync = readerAsync;
        _perWriter = perWriter;
        _writeStyles = writeStyles;
        _readStyles = readStyles;
        _seed = seed;
        _received = [.. readerAsync.Select(_ => new List<int>(perWriter * writerAsync.Length))];
    }

    internal string Description =>
        $"{_writerAsync.Length} writers ({string.Join(',', _writerAsync.Select(Mode))}) styles {_writeStyles}, " +
        $"{_readerAsync.Length} readers ({string.Join(',', _readerAsync.Select(Mode))}) styles {_readStyles}, {_perWriter} values each, seed {_seed}";

    private static string Mode(bool isAsync) => isAsync ? "async" : "thread";

    /// <summary>Runs every party to its end: writers send their values, then the last one to finish poisons the channel, which ends the readers once drained.</summary>
    internal async Task RunAsync()
    {
        var parallel = new Parallel();
        int writersLeft = _writerAsync.Length;
        void WriterDone()
        {
            if (Interlocked.Decrement(ref writersLeft) == 0)
            {
                _channel.Poison();
            }
        }

        for (int w = 0; w < _writerAsync.Length; w++)
        {
            int writer = w;
            AltingChannelOut<int> end = TestChannels.SharedWriter(Kind) ? _channel.CreateOut() : _channel.Out;
            if (_writerAsync[w])
            {
                parallel.AddProcess(async _ =>
                {
                    await WriteAllAsync(end, writer);
                    WriterDone();
                });
            }
            else
            {
                parallel.AddProcess(() =>
                {
                    WriteAll(end, writer);
                    WriterDone();
                });
            }
        }

        for (int r = 0; r < _readerAsync.Length; r++)
        {
            int reader = r;
            AltingChannelIn<int> end = TestChannels.SharedReader(Kind) ? _channel.CreateIn() : _channel.In;
            if (_readerAsync[r])
            {
                parallel.AddProcess(_ => ReadAllAsync(end, reader));
            }
            else
            {
                parallel.AddProcess(() => ReadAll(end, reader));
            }
        }

        await parallel.RunAsync();
    }

    private ChannelKind Kind => _channel switch
    {
        One2OneChannel<int> => ChannelKind.One2One,
        Any2OneChannel<int> => ChannelKind.Any2One,
        One2AnyChannel<int> => ChannelKind.One2Any,
        _ => ChannelKind.Any2Any,
    };

    /// <summary>Null when every value was read exactly once and each reader saw each writer's values in order; otherwise what went wrong.</summary>
    internal string? Failure()
    {
        int writers = _writerAsync.Length;
        var counts = new int[writers * _perWriter];
        var problems = new StringBuilder();
        int swaps = 0;
        for (int r = 0; r < _received.Length; r++)
        {
            var last = new int[writers];
            Array.Fill(last, -1);
            foreach (int value in _received[r])
            {
                counts[value]++;
                int writer = value / _perWriter;
                if (value <= last[writer])
                {
                    if (swaps++ < 5)
                    {
                        problems.Append(System.Globalization.CultureInfo.InvariantCulture, $" reader {r} received {value} after {last[writer]};");
                    }
                }

                last[writer] = value;
            }
        }

        int lost = counts.Count(c => c == 0);
        int duplicated = counts.Count(c => c > 1);
        if (swaps == 0 && lost == 0 && duplicated == 0)
        {
            return null;
        }

        return $"{swaps} values out of order, {lost} lost, {duplicated} duplicated:{problems} ({Description})";
    }

    private int ValueOf(int writer, int i) => (writer * _perWriter) + i;

    private static T Pick<T>(Random random, T styles)
        where T : struct, Enum
    {
        int bits = Convert.ToInt32(styles, System.Globalization.CultureInfo.InvariantCulture);
        while (true)
        {
            int bit = 1 << random.Next(4);
            if ((bits & bit) != 0)
            {
                return (T)Enum.ToObject(typeof(T), bit);
            }
        }
    }

    private void WriteAll(AltingChannelOut<int> end, int writer)
    {
        var random = new Random(_seed + writer);
        var idle = new One2OneChannel<int>();
        var timer = new CSTimer();
        var fair = new Alternative(end, idle.Out.Offer(-1));
        var timed = new Alternative(end, timer);
        for (int i = 0; i < _perWriter; i++)
        {
            int value = ValueOf(writer, i);
            switch (Pick(random, _writeStyles))
            {
                case WriteStyles.Plain:
                    end.Write(value);
                    break;
                case WriteStyles.Offer:
                    end.Offer(value);
                    Assert.Equal(0, fair.FairSelect());
                    break;
                case WriteStyles.OfferWithTimer:
                    do
                    {
                        end.Offer(value);
                        timer.RelativeTimeOut(1);
                    }
                    while (timed.PriSelect() != 0);
                    break;
                default:
                    if (!TryWriteReserved(random, value))
                    {
                        end.Write(value);
                    }

                    break;
            }
        }
    }

    private async Task WriteAllAsync(AltingChannelOut<int> end, int writer)
    {
        var random = new Random(_seed + writer);
        var idle = new One2OneChannel<int>();
        var timer = new CSTimer();
        var fair = new Alternative(end, idle.Out.Offer(-1));
        var timed = new Alternative(end, timer);
        for (int i = 0; i < _perWriter; i++)
        {
            int value = ValueOf(writer, i);
            switch (Pick(random, _writeStyles))
            {
                case WriteStyles.Plain:
                    await end.WriteAsync(value);
                    break;
                case WriteStyles.Offer:
                    end.Offer(value);
                    Assert.Equal(0, await fair.FairSelectAsync());
                    break;
                case WriteStyles.OfferWithTimer:
                    do
                    {
                        end.Offer(value);
                        timer.RelativeTimeOut(1);
                    }
                    while (await timed.PriSelectAsync() != 0);
                    break;
                default:
                    if (!TryWriteReserved(random, value))
                    {
                        await end.WriteAsync(value);
                    }

                    break;
            }
        }
    }

    /// <summary>Writes through a reservation if one is granted (or gives it back unused at random, and reports false).</summary>
    private bool TryWriteReserved(Random random, int value)
    {
        if (_channel.TryReserve(1) == 0)
        {
            return false;
        }

        if (random.Next(4) == 0)
        {
            _channel.ReleaseReservations(1);
            return false;
        }

        _channel.PutReserved(value);
        return true;
    }

    private void ReadAll(AltingChannelIn<int> end, int reader)
    {
        var random = new Random(~_seed - reader);
        var idle = new One2OneChannel<int>();
        var timer = new CSTimer();
        var fair = new Alternative(idle.In, end);
        var timed = new Alternative(end, timer);
        List<int> received = _received[reader];
        try
        {
            while (true)
            {
                switch (Pick(random, _readStyles))
                {
                    case ReadStyles.Plain:
                        received.Add(end.Read());
                        break;
                    case ReadStyles.Select:
                        Assert.Equal(1, fair.FairSelect());
                        received.Add(end.Read());
                        break;
                    case ReadStyles.SelectWithTimer:
                        timer.RelativeTimeOut(1);
                        if (timed.PriSelect() == 0)
                        {
                            received.Add(end.Read());
                        }

                        break;
                    default:
                        if (!TryReadHeld(random, received))
                        {
                            received.Add(end.Read());
                        }

                        break;
                }
            }
        }
        catch (PoisonException)
        {
        }
    }

    private async Task ReadAllAsync(AltingChannelIn<int> end, int reader)
    {
        var random = new Random(~_seed - reader);
        var idle = new One2OneChannel<int>();
        var timer = new CSTimer();
        var fair = new Alternative(idle.In, end);
        var timed = new Alternative(end, timer);
        List<int> received = _received[reader];
        try
        {
            while (true)
            {
                switch (Pick(random, _readStyles))
                {
                    case ReadStyles.Plain:
                        received.Add(await end.ReadAsync());
                        break;
                    case ReadStyles.Select:
                        Assert.Equal(1, await fair.FairSelectAsync());
                        received.Add(await end.ReadAsync());
                        break;
                    case ReadStyles.SelectWithTimer:
                        timer.RelativeTimeOut(1);
                        if (await timed.PriSelectAsync() == 0)
                        {
                            received.Add(await end.ReadAsync());
                        }

                        break;
                    default:
                        if (!TryReadHeld(random, received))
                        {
                            received.Add(await end.ReadAsync());
                        }

                        break;
                }
            }
        }
        catch (PoisonException)
        {
        }
    }

    /// <summary>Holds a value if one is there: commits it (read) or releases it (put back, reported as nothing read).</summary>
    private bool TryReadHeld(Random random, List<int> received)
    {
        if (_channel.TryHold() is not { } hold)
        {
            return false;
        }

        if (random.Next(2) == 0)
        {
            _channel.Release(hold);
            return false;
        }

        CspChannel<int>.Commit(hold);
        received.Add(hold.Item);
        return true;
    }
}
