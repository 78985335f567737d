using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Processes;

/// <summary>
/// The execution context (AsyncLocal values, culture) a process starts with: that of the
/// <see cref="Parallel.RunAsync"/> caller, or a clean one if the caller suppressed flow; never
/// what an earlier process on the same pool thread left behind.
/// </summary>
public class ProcessExecutionContextTests
{
    private static readonly AsyncLocal<string?> s_value = new();

    [Fact(Timeout = 30000)]
    public async Task RunAsync_CallerHasAsyncLocal_ThreadAndAsyncProcessesSeeIt()
    {
        using var pool = new CSPThreadPool();
        string? seenByThread = null;
        string? seenByAsync = null;
        var parallel = new Parallel { ThreadPool = pool };
        parallel.AddProcess(() => seenByThread = s_value.Value);
        parallel.AddProcess(_ =>
        {
            seenByAsync = s_value.Value;
            return Task.CompletedTask;
        });

        await WithValueAsync("caller", () => parallel.RunAsync());

        Assert.Equal("caller", seenByThread);
        Assert.Equal("caller", seenByAsync);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_FlowSuppressed_ThreadProcessOnReusedThreadStartsWithCleanContext()
    {
        // The first run creates the pool thread while its caller has a value; the second run,
        // whose caller suppressed flow, reuses that thread. Its process must not see the value
        // of the caller that happened to create the thread.
        using var pool = new CSPThreadPool();
        ThreadProcessRun first = default;
        ThreadProcessRun second = default;

        await WithValueAsync("thread creator", async () => first = await RunThreadProcessAsync(pool, parallel => parallel.RunAsync()));
        await WithValueAsync("suppressed caller", async () => second = await RunThreadProcessAsync(pool, RunWithFlowSuppressed));

        Assert.Equal("thread creator", first.Seen);
        Assert.Equal(first.ThreadId, second.ThreadId);
        Assert.Null(second.Seen);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_ThreadProcessSetsAsyncLocal_NextProcessOnSameThreadDoesNotSeeIt()
    {
        using var pool = new CSPThreadPool();

        ThreadProcessRun first = await RunThreadProcessAsync(pool, RunWithFlowSuppressed, then: () => s_value.Value = "left behind");
        ThreadProcessRun second = await RunThreadProcessAsync(pool, RunWithFlowSuppressed);

        Assert.Equal(first.ThreadId, second.ThreadId);
        Assert.Null(second.Seen);
    }

    [Fact(Timeout = 30000)]
    public async Task RunAsync_FlowSuppressed_AsyncProcessStartsWithCleanContext()
    {
        string? seen = "not run";
        var parallel = new Parallel();
        parallel.AddProcess(_ =>
        {
            seen = s_value.Value;
            return Task.CompletedTask;
        });

        await WithValueAsync("suppressed caller", () => RunWithFlowSuppressed(parallel));

        Assert.Null(seen);
    }

    /// <summary>
    /// Runs a Parallel of one thread process on <paramref name="pool"/> (started by
    /// <paramref name="start"/>); the process records its thread and the value it sees, then runs
    /// <paramref name="then"/>.
    /// </summary>
    private static async Task<ThreadProcessRun> RunThreadProcessAsync(CSPThreadPool pool, Func<Parallel, Task> start, Action? then = null)
    {
        ThreadProcessRun run = new(0, "not run");
        var parallel = new Parallel { ThreadPool = pool };
        parallel.AddProcess(() =>
        {
            run = new ThreadProcessRun(Environment.CurrentManagedThreadId, s_value.Value);
            then?.Invoke();
        });
        await start(parallel);
        return run;
    }

    /// <summary>Runs <paramref name="body"/> with the AsyncLocal set; the caller's own value is untouched.</summary>
    private static async Task WithValueAsync(string value, Func<Task> body)
    {
        s_value.Value = value;
        await body();
    }

    /// <summary>Starts the run while execution-context flow is suppressed.</summary>
    private static Task RunWithFlowSuppressed(Parallel parallel)
    {
        using (ExecutionContext.SuppressFlow())
        {
            return parallel.RunAsync();
        }
    }

    private readonly record struct ThreadProcessRun(int ThreadId, string? Seen);
}
