using System.Diagnostics;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Alternation;

/// <summary>The four channel kinds, for theories that run on each.</summary>
public enum AltKind
{
    One2One,
    Any2One,
    One2Any,
    Any2Any,
}

/// <summary>Channel construction and kind properties for the alternation tests.</summary>
internal static class AltChannels
{
    /// <summary>Creates a channel of <paramref name="kind"/>: unbuffered when <paramref name="capacity"/> is 0, else with a FIFO buffer.</summary>
    internal static CspChannel<T> Create<T>(AltKind kind, int capacity = 0) => (kind, capacity) switch
    {
        (AltKind.One2One, 0) => new One2OneChannel<T>(),
        (AltKind.One2One, _) => new One2OneChannel<T>(new FifoBuffer<T>(capacity)),
        (AltKind.Any2One, 0) => new Any2OneChannel<T>(),
        (AltKind.Any2One, _) => new Any2OneChannel<T>(new FifoBuffer<T>(capacity)),
        (AltKind.One2Any, 0) => new One2AnyChannel<T>(),
        (AltKind.One2Any, _) => new One2AnyChannel<T>(new FifoBuffer<T>(capacity)),
        (AltKind.Any2Any, 0) => new Any2AnyChannel<T>(),
        (AltKind.Any2Any, _) => new Any2AnyChannel<T>(new FifoBuffer<T>(capacity)),
        _ => throw new ArgumentOutOfRangeException(nameof(kind)),
    };

    internal static bool SharedReader(AltKind kind) => kind is AltKind.One2Any or AltKind.Any2Any;

    internal static bool SharedWriter(AltKind kind) => kind is AltKind.Any2One or AltKind.Any2Any;

    /// <summary>A reading end for one process: the channel's own end on single-reader kinds, a new one on shared-reader kinds.</summary>
    internal static AltingChannelIn<T> InFor<T>(CspChannel<T> channel, AltKind kind) => SharedReader(kind) ? channel.CreateIn() : channel.In;

    /// <summary>A writing end for one process: the channel's own end on single-writer kinds, a new one on shared-writer kinds.</summary>
    internal static AltingChannelOut<T> OutFor<T>(CspChannel<T> channel, AltKind kind) => SharedWriter(kind) ? channel.CreateOut() : channel.Out;
}

/// <summary>
/// A reading end as a guard: a channel's <see cref="AltingChannelIn{T}"/>, or a guard from outside
/// the library that also reads (a remote end). Helpers take it so that their scenarios run over both.
/// </summary>
internal readonly record struct InputEnd(Guard Guard, IChannelIn<int> In)
{
    public static implicit operator InputEnd(AltingChannelIn<int> end) => FromChannelEnd(end);

    internal static InputEnd FromChannelEnd(AltingChannelIn<int> end) => new(end, end);
}

/// <summary>Theory data shared by the alternation tests.</summary>
public static class AltData
{
    /// <summary>Every kind, unbuffered and buffered.</summary>
    public static TheoryData<AltKind, int> KindsAndCapacities()
    {
        var data = new TheoryData<AltKind, int>();
        foreach (AltKind kind in Enum.GetValues<AltKind>())
        {
            data.Add(kind, 0);
            data.Add(kind, 3);
        }

        return data;
    }

    /// <summary>Every kind.</summary>
    public static TheoryData<AltKind> Kinds()
    {
        var data = new TheoryData<AltKind>();
        foreach (AltKind kind in Enum.GetValues<AltKind>())
        {
            data.Add(kind);
        }

        return data;
    }
}

/// <summary>
/// A blocking party on a dedicated background thread (never a .NET pool thread), with a task
/// that completes with its result or its exception.
/// </summary>
internal sealed class AltThread<TResult>
{
    private readonly TaskCompletionSource<TResult> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private AltThread(Func<TResult> body, string name)
    {
        Thread = new Thread(() =>
        {
            try
            {
                _completion.SetResult(body());
            }
#pragma warning disable CA1031 // Handed to the test through the task.
            catch (Exception exception)
#pragma warning restore CA1031
            {
                _completion.SetException(exception);
            }
        })
        {
            IsBackground = true,
            Name = name,
        };
    }

    internal Thread Thread { get; }

    internal Task<TResult> Completion => _completion.Task;

    internal static AltThread<TResult> Start(Func<TResult> body, string name = "AltThread")
    {
        var party = new AltThread<TResult>(body, name);
        party.Thread.Start();
        return party;
    }

    /// <summary>
    /// Waits until the thread is in a wait (or has ended). Only used to make a check stronger: a
    /// thread may also show as waiting for other reasons, which can only weaken a test, never
    /// make it wrong.
    /// </summary>
    internal void WaitUntilBlockedOrEnded()
    {
        while ((Thread.ThreadState & (System.Threading.ThreadState.WaitSleepJoin | System.Threading.ThreadState.Stopped)) == 0 && !Completion.IsCompleted)
        {
            Thread.Yield();
        }
    }
}

internal static class AltThread
{
    internal static AltThread<T> Start<T>(Func<T> body, string name = "AltThread") => AltThread<T>.Start(body, name);

    internal static AltThread<bool> Start(Action body, string name = "AltThread") => AltThread<bool>.Start(
        () =>
        {
            body();
            return true;
        },
        name);
}

/// <summary>
/// Processes of a stress run whose failure poisons everything (<c>poisonAll</c>), so that the other
/// processes end and the failure is reported rather than hanging the run.
/// </summary>
internal sealed class FailFastProcesses(Parallel par, Action poisonAll)
{
    internal void AddThread(Action body) => par.AddProcess(() =>
    {
        try
        {
            body();
        }
        catch
        {
            poisonAll();
            throw;
        }
    });

    internal void AddAsync(Func<Task> body) => par.AddProcess(async _ =>
    {
        try
        {
            await body();
        }
        catch
        {
            poisonAll();
            throw;
        }
    });
}

internal static class RandomCancel
{
    /// <summary>
    /// Runs <paramref name="write"/> with a token that is cancelled, one time in
    /// <paramref name="oneIn"/>, if the write did not complete at once; retries until a write
    /// completes, and returns how many were cancelled (a cancelled write has written nothing).
    /// </summary>
    internal static async ValueTask<int> WriteAsync(Func<CancellationToken, ValueTask> write, Random random, int oneIn)
    {
        for (int cancelled = 0; ; cancelled++)
        {
            var cts = new CancellationTokenSource();
            ValueTask attempt = write(cts.Token);
            if (!attempt.IsCompleted && random.Next(oneIn) == 0)
            {
                cts.Cancel();
            }

            try
            {
                await attempt;
                return cancelled;
            }
            catch (OperationCanceledException)
            {
            }
        }
    }
}

/// <summary>Counts distinct items: each must be seen exactly once.</summary>
internal sealed class ItemCounter(int items)
{
    private readonly int[] _counts = new int[items];
    private long _outOfRange;
    private long _total;

    private long _violations;
    private string? _firstViolation;

    internal long Total => Interlocked.Read(ref _total);

    /// <summary>Records a broken expectation seen inside a process (asserting there would leave the others hanging).</summary>
    internal void Violation(string message)
    {
        Interlocked.CompareExchange(ref _firstViolation, message, null);
        Interlocked.Increment(ref _violations);
    }

    internal void Count(int item)
    {
        Interlocked.Increment(ref _total);
        if ((uint)item >= (uint)_counts.Length)
        {
            Interlocked.Increment(ref _outOfRange);
            return;
        }

        Interlocked.Increment(ref _counts[item]);
    }

    /// <summary>Fails, naming the first few offenders, unless every item was counted exactly once.</summary>
    internal void AssertEachExactlyOnce()
    {
        var missing = new List<int>();
        var duplicated = new List<int>();
        int missingCount = 0;
        int duplicatedCount = 0;
        for (int i = 0; i < _counts.Length; i++)
        {
            int c = Volatile.Read(ref _counts[i]);
            if (c == 0)
            {
                missingCount++;
                if (missing.Count < 10)
                {
                    missing.Add(i);
                }
            }
            else if (c > 1)
            {
                duplicatedCount++;
                if (duplicated.Count < 10)
                {
                    duplicated.Add(i);
                }
            }
        }

        Assert.True(Interlocked.Read(ref _violations) == 0, $"{_violations} violation(s), first: {_firstViolation}");
        Assert.True(
            missingCount == 0 && duplicatedCount == 0 && Interlocked.Read(ref _outOfRange) == 0,
            $"{missingCount} item(s) lost (e.g. {string.Join(", ", missing)}), {duplicatedCount} duplicated (e.g. {string.Join(", ", duplicated)}), {_outOfRange} out of range; {Total} counted of {_counts.Length}.");
    }
}

internal static class AltTime
{
    /// <summary>Milliseconds elapsed since <paramref name="startTimestamp"/> (a <see cref="Stopwatch.GetTimestamp"/> value), as a double.</summary>
    internal static double MillisecondsSince(long startTimestamp) =>
        (Stopwatch.GetTimestamp() - startTimestamp) * 1000.0 / Stopwatch.Frequency;
}
