// The four processes of CommsTime. Each is written twice, as a thread process (Run, blocking
// reads and writes) and as an async process (RunAsync, awaited reads and writes): add it with
// par.AddProcess(p) or par.AddProcess(p.RunAsync). Each ends on poison and, as CSP processes do,
// poisons its own channels on the way out, so the whole ring winds down.

/// <summary>Outputs its initial value, then copies its input to its output: occam's <c>PREFIX</c>.</summary>
class Prefix : ICSPProcess
{
    private readonly int initial;
    private readonly IChannelIn<int> input;
    private readonly IChannelOut<int> output;

    public Prefix(int initial, IChannelIn<int> input, IChannelOut<int> output)
    {
        this.initial = initial;
        this.input = input;
        this.output = output;
    }

    public void Run()
    {
        try
        {
            output.Write(initial);
            while (true)
            {
                output.Write(input.Read());
            }
        }
        catch (PoisonException)
        {
            input.Poison();
            output.Poison();
        }
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        try
        {
            await output.WriteAsync(initial, cancellationToken);
            while (true)
            {
                await output.WriteAsync(await input.ReadAsync(cancellationToken), cancellationToken);
            }
        }
        catch (PoisonException)
        {
            input.Poison();
            output.Poison();
        }
    }
}

/// <summary>
/// Copies each input value to both outputs: occam's <c>DELTA</c>. Sequential (JCSP's
/// <c>SeqDelta</c>): first to <c>out0</c>, then to <c>out1</c>. Parallel (JCSP's <c>Delta</c>):
/// both writes at once, as a <c>PAR</c>, ending when both are done.
/// </summary>
class Delta : ICSPProcess
{
    private readonly IChannelIn<int> input;
    private readonly IChannelOut<int> out0;
    private readonly IChannelOut<int> out1;
    private readonly bool parallel;

    public Delta(IChannelIn<int> input, IChannelOut<int> out0, IChannelOut<int> out1, bool parallel)
    {
        this.input = input;
        this.out0 = out0;
        this.out1 = out1;
        this.parallel = parallel;
    }

    public void Run()
    {
        try
        {
            if (!parallel)
            {
                while (true)
                {
                    int value = input.Read();
                    out0.Write(value);
                    out1.Write(value);
                }
            }

            // As JCSP's Delta: one Parallel of two writer processes, run again for every value.
            var write0 = new WriteOnce(out0);
            var write1 = new WriteOnce(out1);
            var writeBoth = new Parallel(write0, write1);
            while (true)
            {
                int value = input.Read();
                write0.Value = value;
                write1.Value = value;
                try
                {
                    writeBoth.Run();
                }
                catch (AggregateException e) when (e.InnerExceptions.All(inner => inner is PoisonException))
                {
                    throw new PoisonException("An output of Delta was poisoned.", e);
                }
            }
        }
        catch (PoisonException)
        {
            input.Poison();
            out0.Poison();
            out1.Poison();
        }
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                int value = await input.ReadAsync(cancellationToken);
                if (parallel)
                {
                    // Both writes are under way at once; wait for both, as a PAR does, even if one fails.
                    ValueTask write0 = out0.WriteAsync(value, cancellationToken);
                    ValueTask write1 = out1.WriteAsync(value, cancellationToken);
                    await Task.WhenAll(write0.AsTask(), write1.AsTask());
                }
                else
                {
                    await out0.WriteAsync(value, cancellationToken);
                    await out1.WriteAsync(value, cancellationToken);
                }
            }
        }
        catch (PoisonException)
        {
            input.Poison();
            out0.Poison();
            out1.Poison();
        }
    }

    /// <summary>Writes <see cref="Value"/> once per run: one branch of the parallel Delta.</summary>
    private sealed class WriteOnce : ICSPProcess
    {
        private readonly IChannelOut<int> output;

        public WriteOnce(IChannelOut<int> output) => this.output = output;

        public int Value { get; set; }

        public void Run() => output.Write(Value);
    }
}

/// <summary>Outputs each input value plus one: occam's <c>SUCC</c>.</summary>
class Successor : ICSPProcess
{
    private readonly IChannelIn<int> input;
    private readonly IChannelOut<int> output;

    public Successor(IChannelIn<int> input, IChannelOut<int> output)
    {
        this.input = input;
        this.output = output;
    }

    public void Run()
    {
        try
        {
            while (true)
            {
                output.Write(unchecked(input.Read() + 1));
            }
        }
        catch (PoisonException)
        {
            input.Poison();
            output.Poison();
        }
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                await output.WriteAsync(unchecked(await input.ReadAsync(cancellationToken) + 1), cancellationToken);
            }
        }
        catch (PoisonException)
        {
            input.Poison();
            output.Poison();
        }
    }
}

/// <summary>
/// Reads the ring's numbers: first some to warm up (at least <c>warmUp</c> of them, and for at
/// least <c>minWarmUpTime</c>, so that the JIT compiler has optimised the code being
/// timed), then <c>rounds</c> timed rounds of
/// <c>iterations</c> each (JCSP's <c>Consume</c>). Checks that the numbers come in order
/// 0, 1, 2, ...; then poisons its input, which shuts the ring down.
/// </summary>
class Consumer : ICSPProcess
{
    private readonly IChannelIn<int> input;
    private readonly int warmUp;
    private readonly TimeSpan minWarmUpTime;
    private readonly int iterations;
    private readonly int rounds;
    private int expected;

    public Consumer(IChannelIn<int> input, int warmUp, TimeSpan minWarmUpTime, int iterations, int rounds)
    {
        this.input = input;
        this.warmUp = warmUp;
        this.minWarmUpTime = minWarmUpTime;
        this.iterations = iterations;
        this.rounds = rounds;
    }

    /// <summary>The time each timed round took.</summary>
    public List<TimeSpan> RoundTimes { get; } = [];

    /// <summary>Whether every number read was one more than the one before, starting from 0.</summary>
    public bool InOrder { get; private set; } = true;

    /// <summary>The last number read.</summary>
    public int Last => expected - 1;

    public void Run()
    {
        try
        {
            long warmUpStart = System.Diagnostics.Stopwatch.GetTimestamp();
            for (int i = 0; i < warmUp || System.Diagnostics.Stopwatch.GetElapsedTime(warmUpStart) < minWarmUpTime; i++)
            {
                Check(input.Read());
            }

            for (int round = 0; round < rounds; round++)
            {
                long start = System.Diagnostics.Stopwatch.GetTimestamp();
                for (int i = 0; i < iterations; i++)
                {
                    Check(input.Read());
                }

                RoundTimes.Add(System.Diagnostics.Stopwatch.GetElapsedTime(start));
            }
        }
        finally
        {
            input.Poison();
        }
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        try
        {
            long warmUpStart = System.Diagnostics.Stopwatch.GetTimestamp();
            for (int i = 0; i < warmUp || System.Diagnostics.Stopwatch.GetElapsedTime(warmUpStart) < minWarmUpTime; i++)
            {
                Check(await input.ReadAsync(cancellationToken));
            }

            for (int round = 0; round < rounds; round++)
            {
                long start = System.Diagnostics.Stopwatch.GetTimestamp();
                for (int i = 0; i < iterations; i++)
                {
                    Check(await input.ReadAsync(cancellationToken));
                }

                RoundTimes.Add(System.Diagnostics.Stopwatch.GetElapsedTime(start));
            }
        }
        finally
        {
            input.Poison();
        }
    }

    private void Check(int value)
    {
        if (value != expected)
        {
            InOrder = false;
        }

        expected = unchecked(value + 1);
    }
}
