using System.Collections.Concurrent;
using System.Diagnostics;
using Barrier = CspNet.Barrier;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Barriers;

/// <summary>
/// Starts blocking thread processes on dedicated background threads (never on the .NET thread
/// pool, which a 2-core machine could starve), each with a task that ends when the process ends.
/// </summary>
internal static class Party
{
    internal static Task OnThread(Action body, string name = "BarrierParty") => OnThread(
        () =>
        {
            body();
            return true;
        },
        name);

    internal static Task<T> OnThread<T>(Func<T> body, string name = "BarrierParty")
    {
        var completion = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            try
            {
                completion.SetResult(body());
            }
#pragma warning disable CA1031 // The exception is handed to the test through the task.
            catch (Exception exception)
#pragma warning restore CA1031
            {
                completion.SetException(exception);
            }
        })
        {
            IsBackground = true,
            Name = name,
        };
        thread.Start();
        return completion.Task;
    }

    /// <summary>Runs an async process on the thread pool (it holds no thread while it waits).</summary>
    internal static Task Async(Func<Task> body) => Task.Run(body);
}

/// <summary>
/// Waits for a condition on the state of a barrier or bucket (for example "2 processes are
/// parked"). The condition is exact (the counters are read under the object's lock); only the
/// moment it becomes true is unknown, so the test polls it, bounded by a timeout. Nothing is
/// ordered by sleeping.
/// </summary>
internal static class Poll
{
    internal static async Task UntilAsync(Func<bool> condition, string description, int timeoutMilliseconds = 5_000)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.ElapsedMilliseconds > timeoutMilliseconds)
            {
                throw new TimeoutException($"Timed out after {timeoutMilliseconds} ms waiting until {description}.");
            }

            Thread.Yield();
            await Task.Yield();
        }
    }
}

/// <summary>
/// Per-phase bookkeeping that proves a barrier's phases are exact. Each process calls
/// <see cref="Arrive"/> just before it syncs in phase k and <see cref="Pass"/> just after:
/// on arrival nobody may have passed phase k yet (else the phase was released without this
/// process), and on passing, the number of arrivals must equal what the test expects for phase k
/// (else the phase was released early). A violation is recorded and the barrier is poisoned, so
/// every process ends at once instead of deadlocking, and the test reports the violation.
/// </summary>
internal sealed class PhaseLog
{
    private readonly int[] _arrivals;
    private readonly int[] _passed;
    private readonly ConcurrentQueue<string> _violations = new();
    private readonly IPoisonable _barrier;

    internal PhaseLog(int phases, IPoisonable barrier)
    {
        _arrivals = new int[phases];
        _passed = new int[phases];
        _barrier = barrier;
    }

    internal IReadOnlyCollection<string> Violations => _violations;

    internal int Arrivals(int phase) => Volatile.Read(ref _arrivals[phase]);

    internal int Passed(int phase) => Volatile.Read(ref _passed[phase]);

    /// <summary>Records this process's arrival at <paramref name="phase"/>; nobody may have passed it yet.</summary>
    internal void Arrive(int phase)
    {
        Interlocked.Increment(ref _arrivals[phase]);
        CheckNotPassed(phase, "arrived at");
    }

    /// <summary>
    /// Checks, for a process about to leave a phase some other way (a resign, a cancelled sync),
    /// that the phase has not completed without it.
    /// </summary>
    internal void CheckNotPassed(int phase, string what)
    {
        int passed = Passed(phase);
        if (passed != 0)
        {
            Fail($"A process {what} phase {phase} after {passed} process(es) had already passed it: the phase was released without it.");
        }
    }

    /// <summary>Records that this process passed <paramref name="phase"/>, having seen exactly <paramref name="expectedArrivals"/> arrivals.</summary>
    internal void Pass(int phase, int expectedArrivals)
    {
        int arrivals = Arrivals(phase);
        if (arrivals != expectedArrivals)
        {
            Fail($"A process passed phase {phase} when {arrivals} process(es) had arrived; expected exactly {expectedArrivals}.");
        }

        Interlocked.Increment(ref _passed[phase]);
    }

    internal void Fail(string violation)
    {
        _violations.Enqueue(violation);
        _barrier.Poison();
    }

    /// <summary>Runs a process body, turning an unexpected exception into a violation (and poisoning).</summary>
    internal void Guard(Action body)
    {
        try
        {
            body();
        }
        catch (PoisonException) when (!_violations.IsEmpty)
        {
            // Poisoned by a violation elsewhere: that violation is what the test reports.
        }
#pragma warning disable CA1031 // Reported through the violations.
        catch (Exception exception)
#pragma warning restore CA1031
        {
            Fail($"A process failed: {exception}");
        }
    }

    /// <inheritdoc cref="Guard(Action)" />
    internal async Task GuardAsync(Func<Task> body)
    {
        try
        {
            await body();
        }
        catch (PoisonException) when (!_violations.IsEmpty)
        {
        }
#pragma warning disable CA1031 // Reported through the violations.
        catch (Exception exception)
#pragma warning restore CA1031
        {
            Fail($"A process failed: {exception}");
        }
    }

    internal void AssertNoViolations() =>
        Assert.True(_violations.IsEmpty, "Invariant violations:" + Environment.NewLine + string.Join(Environment.NewLine, _violations.Take(10)));
}

/// <summary>Checks on a <see cref="ValueTask"/> that must have finished inside the call.</summary>
internal static class AtOnce
{
    /// <summary>True if the operation completed successfully inside the call (then consumes it).</summary>
    internal static bool Succeeded(ValueTask operation)
    {
        if (!operation.IsCompletedSuccessfully)
        {
            return false;
        }

        operation.GetAwaiter().GetResult();
        return true;
    }

    /// <summary>Asserts the operation was cancelled inside the call, and returns its exception.</summary>
    internal static OperationCanceledException Cancelled(ValueTask operation)
    {
        Assert.True(operation.IsCanceled, "The operation should have been cancelled at once.");
        return Assert.ThrowsAny<OperationCanceledException>(() => operation.GetAwaiter().GetResult());
    }
}

/// <summary>
/// Races cancellation with the start of an operation: a dedicated thread cancels each token
/// the moment it is handed over, while the caller starts the operation after a random short
/// spin, so the cancellation lands anywhere in the call (before it looks at the token, while it
/// registers, while it parks, or after). No outcome depends on which point it hits; the caller
/// checks the invariant after each round. Runs the rounds on the calling thread without awaiting
/// (the operation can only end by cancellation), so thousands of rounds take milliseconds.
/// </summary>
internal static class CancellationRace
{
    /// <summary>
    /// Runs up to <paramref name="rounds"/> rounds (at most <paramref name="milliseconds"/> long in
    /// all). Each round starts <paramref name="operation"/> with a token being cancelled right then,
    /// requires it to end cancelled, and then requires <paramref name="invariant"/>.
    /// Returns the number of rounds run.
    /// </summary>
    internal static int Run(Func<CancellationToken, Task> operation, Func<bool> invariant, string invariantText, int rounds, int milliseconds, int seed)
    {
        var random = new Random(seed);
        var clock = Stopwatch.StartNew();
        using var canceller = new EagerCanceller();
        int round = 0;
        for (; round < rounds && clock.ElapsedMilliseconds < milliseconds; round++)
        {
            using var cancellation = new CancellationTokenSource();
            canceller.Cancel(cancellation);
            Thread.SpinWait(random.Next(64));
            Task task = operation(cancellation.Token);
            if (!SpinWait.SpinUntil(() => task.IsCompleted, 5_000))
            {
                throw new TimeoutException($"Round {round}: the operation did not end after its token was cancelled.");
            }

            if (!task.IsCanceled && task.Exception?.InnerException is not OperationCanceledException)
            {
                throw new InvalidOperationException($"Round {round}: the operation should have been cancelled, but ended {task.Status}.", task.Exception);
            }

            if (!invariant())
            {
                throw new InvalidOperationException($"Round {round}: after a cancelled operation, expected {invariantText}.");
            }
        }

        return round;
    }

    /// <summary>A dedicated thread that cancels each token source it is handed as soon as it sees it.</summary>
    private sealed class EagerCanceller : IDisposable
    {
        private readonly Thread _thread;
        private CancellationTokenSource? _slot;
        private volatile bool _stopped;

        internal EagerCanceller()
        {
            _thread = new Thread(Run) { IsBackground = true, Name = "EagerCanceller" };
            _thread.Start();
        }

        internal void Cancel(CancellationTokenSource source) => Volatile.Write(ref _slot, source);

        public void Dispose()
        {
            _stopped = true;
            _thread.Join();
        }

        private void Run()
        {
            // Spins hot (the next token comes within microseconds); the race runs for a bounded time only.
            while (!_stopped)
            {
                if (Interlocked.Exchange(ref _slot, null) is { } source)
                {
                    source.Cancel();
                }
                else
                {
                    Thread.SpinWait(1);
                }
            }
        }
    }
}
