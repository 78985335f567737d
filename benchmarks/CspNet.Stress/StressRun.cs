using System.Diagnostics;
using System.Globalization;
using System.Text;

// Shared by the stress command (benchmarks/CspNet.Stress) and the test suite's smaller version
// (tests/CspNet.Tests/Channels/ChannelStressTests.cs), which links this file. It depends on
// nothing but CspNet's public API, so that both can compile it.
namespace CspNet.Stress;

/// <summary>
/// Pushes a known set of distinct items through one channel with several writers and readers,
/// each of which switches between being a blocking thread process and an async process from one
/// chunk of items to the next, while async operations are cancelled at random. Every item must
/// arrive exactly once, whatever the timing.
/// </summary>
/// <remarks>
/// <para>
/// Writer <c>w</c> sends the values <c>w * itemsPerWriter</c> to <c>(w + 1) * itemsPerWriter - 1</c>
/// in order. A writer whose <c>WriteAsync</c> is cancelled sends the same value again (a cancelled
/// write delivered nothing); a reader whose <c>ReadAsync</c> is cancelled simply reads again (a
/// cancelled read took nothing). Readers count each value into <see cref="_counts"/>; at the end
/// every count must be exactly 1. Each writer's values must also arrive in order: a writer starts
/// a write only when its previous one has completed, so whatever the number of readers, each
/// reader must see any one writer's values in increasing order.
/// </para>
/// <para>
/// A party's thread chunks run on a fresh dedicated thread while the party's async method awaits
/// it, so a One end is never used by two processes at once, yet thread and async operations meet
/// on the channel in every combination.
/// </para>
/// <para>
/// Cancellation comes from three places, all independent of correctness: each async party cancels
/// its own token before its first async chunk (so cancellation provably happens), every party
/// cancels a random party's token every few operations, and a canceller thread woken every few
/// operations cancels a random party's token from outside, racing with the partner that is
/// claiming the same waiter. When all writers have finished the channel is poisoned: readers drain
/// whatever is still buffered and end on <see cref="PoisonException"/>.
/// </para>
/// </remarks>
internal sealed class StressRun : IDisposable
{
    /// <summary>Largest number of items a party handles before it switches between thread and async.</summary>
    private const int MaxChunk = 20_000;

    /// <summary>Readers publish how many items they have read in steps of this many.</summary>
    private const int ProgressStep = 1024;

    /// <summary>Mean number of operations between two cancellations a party triggers.</summary>
    private const int CancelEvery = 256;

    private readonly CspChannel<int> _channel;
    private readonly int _writers;
    private readonly int _readers;
    private readonly int _itemsPerWriter;
    private readonly int _seed;
    private readonly int _maxChunk;
    private readonly int[] _counts;
    private readonly CancellationTokenSource[] _tokens;
    private readonly SemaphoreSlim _cancelRequests = new(0);
    private volatile bool _stopCanceller;
    private Exception? _cancellerError;

    private long _reads;
    private long _progress;
    private long _cancelledReads;
    private long _cancelledWrites;
    private long _cancelledWhilePending;
    private long _threadChunks;
    private long _asyncChunks;
    private long _orderViolations;
    private long _outOfRange;

    /// <summary>Prepares a run; <see cref="RunAsync"/> runs it.</summary>
    /// <param name="channel">The channel, unused so far; the run poisons it at the end.</param>
    /// <param name="writers">Writers, 1 unless the channel's writing end may be shared.</param>
    /// <param name="readers">Readers, 1 unless the channel's reading end may be shared.</param>
    /// <param name="itemsPerWriter">Items each writer sends.</param>
    /// <param name="seed">Seed of every random choice (the timing stays random).</param>
    internal StressRun(CspChannel<int> channel, int writers, int readers, int itemsPerWriter, int seed)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(writers, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(readers, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(itemsPerWriter, 1);
        _channel = channel;
        _writers = writers;
        _readers = readers;
        _itemsPerWriter = itemsPerWriter;
        _seed = seed;

        // Small runs switch too: every writer runs several chunks, so each has an async one.
        _maxChunk = Math.Clamp(itemsPerWriter / 4, 1, MaxChunk);
        _counts = new int[checked(writers * itemsPerWriter)];

        _tokens = new CancellationTokenSource[writers + readers];
        for (int i = 0; i < _tokens.Length; i++)
        {
            _tokens[i] = new CancellationTokenSource();
        }
    }

    internal int TotalItems => _counts.Length;

    /// <summary>Items read so far, in steps of a thousand or so: for progress reports while the run goes on.</summary>
    internal long ItemsRead => Interlocked.Read(ref _progress);

    /// <summary>
    /// A test hook: changes each value a reader receives before it is checked, so that a test can
    /// show that <see cref="Failure"/> catches lost, duplicated and reordered items.
    /// </summary>
    internal Func<int, int>? Tamper { get; init; }

    /// <summary>Read operations cancelled (each was retried: a cancelled read took nothing).</summary>
    internal long CancelledReads => Interlocked.Read(ref _cancelledReads);

    /// <summary>Write operations cancelled (each was retried: a cancelled write delivered nothing).</summary>
    internal long CancelledWrites => Interlocked.Read(ref _cancelledWrites);

    public void Dispose()
    {
        // Replaced token sources are left to the collector: another party may still cancel one.
        foreach (CancellationTokenSource tokenSource in _tokens)
        {
            tokenSource.Dispose();
        }

        _cancelRequests.Dispose();
    }

    /// <summary>Runs the whole exchange and returns how long it took; then assert with <see cref="Verify"/>.</summary>
    internal async Task<TimeSpan> RunAsync()
    {
        var stopwatch = Stopwatch.StartNew();
        var canceller = new Thread(CancelLoop) { IsBackground = true, Name = "StressCanceller" };
        canceller.Start();

        // Task.Run keeps the parties off the test framework's synchronisation context.
        Task[] readers = [.. Enumerable.Range(0, _readers).Select(r => Task.Run(() => ReaderAsync(r)))];
        Task[] writers = [.. Enumerable.Range(0, _writers).Select(w => Task.Run(() => WriterAsync(w)))];

        // WhenAny waits without throwing: failures are reported below, readers' first, because a
        // failing reader poisons the channel and the writers then fail with PoisonException.
        await Task.WhenAny(Task.WhenAll(writers));

        // All writes have completed: poison ends the readers once they have drained the buffer.
        // After a failure it also releases every party still blocked.
        _channel.Poison();
        Task parties = Task.WhenAll([.. readers, .. writers]);
        await Task.WhenAny(parties);
        _stopCanceller = true;
        _cancelRequests.Release();
        canceller.Join();

        if (_cancellerError is { } cancellerError)
        {
            throw new InvalidOperationException("Cancelling a token (from the canceller thread) threw.", cancellerError);
        }

        await parties;
        return stopwatch.Elapsed;
    }

    internal string Statistics =>
        $"items {TotalItems:N0}, reads {Interlocked.Read(ref _reads):N0}, cancelled reads {CancelledReads:N0}, cancelled writes {CancelledWrites:N0} " +
        $"({Interlocked.Read(ref _cancelledWhilePending):N0} of them while parked or parking), " +
        $"thread chunks {Interlocked.Read(ref _threadChunks):N0}, async chunks {Interlocked.Read(ref _asyncChunks):N0}, seed {_seed}";

    /// <summary>
    /// After <see cref="RunAsync"/>: null if every item arrived exactly once and each reader saw
    /// every writer's items in order, otherwise what went wrong.
    /// </summary>
    internal string? Failure()
    {
        var problems = new StringBuilder();
        int missing = 0;
        int duplicated = 0;
        for (int i = 0; i < _counts.Length; i++)
        {
            int count = _counts[i];
            if (count == 1)
            {
                continue;
            }

            if (count == 0)
            {
                missing++;
            }
            else
            {
                duplicated++;
            }

            if (missing + duplicated <= 10)
            {
                problems.Append(CultureInfo.InvariantCulture, $" item {i} arrived {count} times;");
            }
        }

        var failures = new List<string>();
        if (missing != 0 || duplicated != 0 || _outOfRange != 0)
        {
            failures.Add($"{missing:N0} items lost, {duplicated:N0} items duplicated, {_outOfRange:N0} unknown items.{problems}");
        }

        if (Interlocked.Read(ref _reads) != TotalItems)
        {
            failures.Add($"the readers read {Interlocked.Read(ref _reads):N0} items, not {TotalItems:N0}.");
        }

        if (_orderViolations != 0)
        {
            failures.Add($"{_orderViolations:N0} times a reader received a writer's item after a later one of the same writer.");
        }

        if (CancelledReads + CancelledWrites == 0)
        {
            failures.Add("no operation was cancelled, but some must have been.");
        }

        return failures.Count == 0 ? null : $"{string.Join(' ', failures)} ({Statistics})";
    }

    private async Task WriterAsync(int writer)
    {
        var party = new Party(this, writer, _seed);
        try
        {
            int next = writer * _itemsPerWriter;
            int end = next + _itemsPerWriter;
            bool threadMode = party.Random.Next(2) == 0;
            while (next < end)
            {
                int from = next;
                int count = Math.Min(end - next, party.Random.Next(1, _maxChunk + 1));
                if (threadMode)
                {
                    Interlocked.Increment(ref _threadChunks);
                    await OnNewThread(() =>
                    {
                        for (int value = from; value < from + count; value++)
                        {
                            _channel.Write(value);
                            party.Tick();
                        }

                        return true;
                    });
                }
                else
                {
                    Interlocked.Increment(ref _asyncChunks);
                    bool cancellable = party.BeginAsyncChunk();
                    for (int value = from; value < from + count; value++)
                    {
                        while (true)
                        {
                            CancellationToken token = cancellable ? party.Token : CancellationToken.None;
                            bool cancelledBefore = token.IsCancellationRequested;
                            try
                            {
                                await _channel.WriteAsync(value, token);
                                break;
                            }
                            catch (OperationCanceledException)
                            {
                                // Nothing was delivered: send the same value again with a fresh token.
                                Interlocked.Increment(ref _cancelledWrites);
                                CountPendingCancellation(cancelledBefore);
                                party.RenewToken();
                            }
                        }

                        party.Tick();
                    }
                }

                next += count;
                threadMode = !threadMode;
            }
        }
        catch
        {
            _channel.Poison();
            throw;
        }
    }

    private async Task ReaderAsync(int reader)
    {
        var party = new Party(this, _writers + reader, _seed) { LastFromWriter = new int[_writers] };
        Array.Fill(party.LastFromWriter, -1);
        try
        {
            bool threadMode = party.Random.Next(2) == 0;
            while (true)
            {
                int count = party.Random.Next(1, _maxChunk + 1);
                bool poisoned;
                if (threadMode)
                {
                    Interlocked.Increment(ref _threadChunks);
                    poisoned = await OnNewThread(() =>
                    {
                        for (int i = 0; i < count; i++)
                        {
                            int value;
                            try
                            {
                                value = _channel.Read();
                            }
                            catch (PoisonException)
                            {
                                return true;
                            }

                            Record(party, value);
                            party.Tick();
                        }

                        return false;
                    });
                }
                else
                {
                    Interlocked.Increment(ref _asyncChunks);
                    poisoned = await ReadChunkAsync(party, count);
                }

                if (poisoned)
                {
                    Interlocked.Add(ref _reads, party.Reads);
                    return;
                }

                threadMode = !threadMode;
            }
        }
        catch
        {
            _channel.Poison();
            throw;
        }
    }

    private async Task<bool> ReadChunkAsync(Party party, int count)
    {
        bool cancellable = party.BeginAsyncChunk();
        for (int i = 0; i < count; i++)
        {
            int value;
            while (true)
            {
                CancellationToken token = cancellable ? party.Token : CancellationToken.None;
                bool cancelledBefore = token.IsCancellationRequested;
                try
                {
                    value = await _channel.ReadAsync(token);
                    break;
                }
                catch (OperationCanceledException)
                {
                    // Nothing was taken: read again with a fresh token.
                    Interlocked.Increment(ref _cancelledReads);
                    CountPendingCancellation(cancelledBefore);
                    party.RenewToken();
                }
                catch (PoisonException)
                {
                    return true;
                }
            }

            Record(party, value);
            party.Tick();
        }

        return false;
    }

    private void CountPendingCancellation(bool cancelledBefore)
    {
        if (!cancelledBefore)
        {
            Interlocked.Increment(ref _cancelledWhilePending);
        }
    }

    private void Record(Party reader, int value)
    {
        if (Tamper is { } tamper)
        {
            value = tamper(value);
        }

        if (++reader.Reads % ProgressStep == 0)
        {
            Interlocked.Add(ref _progress, ProgressStep);
        }

        if ((uint)value >= (uint)_counts.Length)
        {
            Interlocked.Increment(ref _outOfRange);
            return;
        }

        Interlocked.Increment(ref _counts[value]);

        // A reader's chunks run one after another, so its own array needs no synchronisation.
        int[] last = reader.LastFromWriter!;
        int writer = value / _itemsPerWriter;
        if (value <= last[writer])
        {
            Interlocked.Increment(ref _orderViolations);
        }

        last[writer] = value;
    }

    private void CancelLoop()
    {
        var random = new Random(_seed ^ 0x5bd1e995);
        while (true)
        {
            _cancelRequests.Wait();
            if (_stopCanceller)
            {
                return;
            }

            try
            {
                // Cancel runs the channel's cancellation callback on this thread.
                Volatile.Read(ref _tokens[random.Next(_tokens.Length)]).Cancel();
            }
#pragma warning disable CA1031 // Reported by Verify; an exception escaping this thread would crash the test run.
            catch (Exception exception)
#pragma warning restore CA1031
            {
                _cancellerError ??= exception;
                _channel.Poison();
                return;
            }
        }
    }

    private static Task<bool> OnNewThread(Func<bool> body) =>
        Task.Factory.StartNew(body, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    /// <summary>One writer's or reader's random choices and cancellation token.</summary>
    private sealed class Party(StressRun run, int index, int seed)
    {
        private int _untilCancel = 1;
        private bool _cancelledOwnToken;

        internal Random Random { get; } = new(HashCode.Combine(seed, index));

        /// <summary>Values this party has read (a reader's chunks run one after another).</summary>
        internal long Reads { get; set; }

        /// <summary>A reader's last value received from each writer, -1 before the first.</summary>
        internal int[]? LastFromWriter { get; init; }

        internal CancellationToken Token => Volatile.Read(ref run._tokens[index]).Token;

        /// <summary>Chooses whether this async chunk's operations can be cancelled (most can).</summary>
        internal bool BeginAsyncChunk()
        {
            if (!_cancelledOwnToken)
            {
                // The first async chunk starts with an already-cancelled token, so the run
                // cancels at least one operation whatever the timing.
                _cancelledOwnToken = true;
                Volatile.Read(ref run._tokens[index]).Cancel();
                return true;
            }

            return Random.Next(4) != 0;
        }

        internal void RenewToken() => Volatile.Write(ref run._tokens[index], new CancellationTokenSource());

        /// <summary>Called after each operation: now and then cancels some party's token.</summary>
        internal void Tick()
        {
            if (--_untilCancel > 0)
            {
                return;
            }

            _untilCancel = Random.Next(1, 2 * CancelEvery);
            if (Random.Next(2) == 0)
            {
                // From this party's thread: usually between the other party's operations.
                Volatile.Read(ref run._tokens[Random.Next(run._tokens.Length)]).Cancel();
            }
            else
            {
                // From the canceller thread, at a moment this party does not control.
                run._cancelRequests.Release();
            }
        }
    }
}
