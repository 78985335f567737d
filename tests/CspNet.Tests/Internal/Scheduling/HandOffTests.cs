using System.Collections.Concurrent;
using System.Threading.Tasks.Sources;
using CspNet.Internal.Scheduling;

namespace CspNet.Tests.Internal.Scheduling;

/// <summary>
/// <see cref="HandOff"/>: a continuation dispatched from a running continuation runs after it
/// returns, on the same thread, never on its stack; the slots, the chain budget and the watchdog
/// bound how long anything waits; <see cref="ContinuationCore{TResult}"/> runs each continuation
/// exactly once. A slotted item the watchdog moved to the pool (a preempted thread on a loaded
/// machine) arrives through <see cref="IThreadPoolWorkItem.Execute"/>: the assertions about
/// "same thread" hold for the items that came through a slot, which the test items tell apart.
/// </summary>
public class HandOffTests
{
    private static readonly TimeSpan WaitLimit = TimeSpan.FromSeconds(20);

    [Fact(Timeout = 30000)]
    public async Task Dispatch_FromRunningContinuation_RunsAfterItReturnsNeverOnItsStack()
    {
        var log = new ConcurrentQueue<string>();
        var b = new Item("b", log);
        var a = new Item("a", log, () =>
        {
            HandOff.Dispatch(b);
            log.Enqueue("a returns");
        });

        ThreadPool.UnsafeQueueUserWorkItem(a, preferLocal: false);
        await b.Ran.Task.WaitAsync(WaitLimit);

        Assert.True(a.ViaPool);
        if (!b.ViaPool)
        {
            // Through the slot: after a returned, on its thread. (Through the pool only if the
            // watchdog found a's thread stuck, for example preempted on a loaded machine.)
            Assert.Equal(["a", "a returns", "b"], log);
            Assert.Equal(a.Thread, b.Thread);
        }
    }

    [Fact(Timeout = 30000)]
    public async Task Dispatch_FiveWakesWithoutParking_OldestGoesToPoolOthersRunInOrder()
    {
        var log = new ConcurrentQueue<string>();
        Item[] woken = [.. Enumerable.Range(1, 5).Select(i => new Item($"b{i}", log))];
        var a = new Item("a", log, () =>
        {
            foreach (Item item in woken)
            {
                HandOff.Dispatch(item);
            }
        });

        ThreadPool.UnsafeQueueUserWorkItem(a, preferLocal: false);
        await Task.WhenAll(woken.Select(item => item.Ran.Task)).WaitAsync(WaitLimit);

        // Four slots: the fifth wake sent the oldest to the pool, whatever else happened.
        Assert.True(woken[0].ViaPool);
        string[] slotted = [.. log.Where(name => woken.Any(w => w.Name == name && !w.ViaPool))];
        Assert.Equal(slotted.Order(StringComparer.Ordinal), slotted);
        Assert.All(woken.Where(w => !w.ViaPool), w => Assert.Equal(a.Thread, w.Thread));
    }

    [Fact(Timeout = 30000)]
    public async Task Run_ChainLongerThanBudget_NoWorkItemRunsMoreThanBudget()
    {
        const int length = 3 * HandOffRunner.ChainBudget;
        var log = new ConcurrentQueue<string>();
        var items = new Item[length];
        for (int i = length - 1; i >= 0; i--)
        {
            Item? next = i + 1 < length ? items[i + 1] : null;
            items[i] = new Item($"{i}", log, next is null ? null : () => HandOff.Dispatch(next));
        }

        ThreadPool.UnsafeQueueUserWorkItem(items[0], preferLocal: false);
        await items[^1].Ran.Task.WaitAsync(WaitLimit);

        // Each item arrived through the pool or through the slot of its predecessor's thread;
        // a run of slot arrivals is one work item, at most ChainBudget long.
        int longest = 0;
        int current = 0;
        foreach (Item item in items)
        {
            current = item.ViaPool ? 1 : current + 1;
            longest = Math.Max(longest, current);
        }

        Assert.InRange(longest, 1, HandOffRunner.ChainBudget);
        Assert.True(items.Count(item => item.ViaPool) >= length / HandOffRunner.ChainBudget);
    }

    [Fact(Timeout = 30000)]
    public async Task Watchdog_ContinuationBlocksUntilItsWokenItemRuns_ItemRunsOnAnotherThread()
    {
        var log = new ConcurrentQueue<string>();
        var b = new Item("b", log);
        bool bRanWhileABlocked = false;
        var a = new Item("a", log, () =>
        {
            HandOff.Dispatch(b);

            // Sync over async inside a chain: without the watchdog, b would wait for a forever.
            bRanWhileABlocked = b.Ran.Task.Wait(WaitLimit);
        });

        ThreadPool.UnsafeQueueUserWorkItem(a, preferLocal: false);
        await a.Ran.Task.WaitAsync(WaitLimit);

        Assert.True(bRanWhileABlocked);
        Assert.True(b.ViaPool);
        Assert.NotEqual(a.Thread, b.Thread);
    }

    [Fact(Timeout = 30000)]
    public async Task ContinuationCore_CompletedBeforeContinuationRegistered_ContinuationRunsOnceSeeingResult()
    {
        var owner = new CoreOwner();
        short token = owner.Core.Version;
        owner.Core.SetResult(42, owner);
        var seen = new TaskCompletionSource<(ValueTaskSourceStatus, int)>(TaskCreationOptions.RunContinuationsAsynchronously);
        int runs = 0;

        owner.Core.OnCompleted(
            _ =>
            {
                Interlocked.Increment(ref runs);
                seen.TrySetResult((owner.Core.GetStatus(token), owner.Core.GetResult(token)));
            },
            null,
            token,
            ValueTaskSourceOnCompletedFlags.None,
            owner);

        Assert.Equal((ValueTaskSourceStatus.Succeeded, 42), await seen.Task.WaitAsync(WaitLimit));
        Assert.Equal(1, runs);
        Assert.Equal(1, owner.Executions);
    }

    [Fact(Timeout = 30000)]
    public async Task ContinuationCore_ResetAfterSynchronousCompletion_NextContinuationRunsOnlyAfterNextCompletion()
    {
        var owner = new CoreOwner();

        // First operation: completed before anyone awaited, result read at once, core reset.
        short first = owner.Core.Version;
        owner.Core.SetResult(1, owner);
        Assert.Equal(ValueTaskSourceStatus.Succeeded, owner.Core.GetStatus(first));
        Assert.Equal(1, owner.Core.GetResult(first));
        owner.Core.Reset();

        // Second operation: awaited before it completes. Nothing of the first may run it.
        short second = owner.Core.Version;
        var seen = new TaskCompletionSource<(ValueTaskSourceStatus, int)>(TaskCreationOptions.RunContinuationsAsynchronously);
        owner.Core.OnCompleted(_ => seen.TrySetResult((owner.Core.GetStatus(second), owner.Core.GetResult(second))), null, second, ValueTaskSourceOnCompletedFlags.None, owner);
        Assert.Equal(0, owner.Executions);
        Assert.Equal(ValueTaskSourceStatus.Pending, owner.Core.GetStatus(second));
        Assert.Throws<InvalidOperationException>(() => owner.Core.GetResult(first));

        owner.Core.SetResult(2, owner);

        Assert.Equal((ValueTaskSourceStatus.Succeeded, 2), await seen.Task.WaitAsync(WaitLimit));
        Assert.Equal(1, owner.Executions);
    }

    [Fact(Timeout = 30000)]
    public async Task OnCompleted_AwaitUnderSynchronizationContext_ContinuationPostedToIt()
    {
        using var context = new RecordingContext();
        var channel = new One2OneChannel<int>();
        var resumedOnContext = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        context.Post(
            async _ =>
            {
                int value = await channel.ReadAsync();
                resumedOnContext.TrySetResult(value == 7 && SynchronizationContext.Current == context);
            },
            null);
        await context.Started.Task.WaitAsync(WaitLimit);
        await channel.WriteAsync(7).AsTask().WaitAsync(WaitLimit);

        Assert.True(await resumedOnContext.Task.WaitAsync(WaitLimit));
        Assert.True(context.Posts >= 2);
    }

    /// <summary>A hand-off item that records how it ran: through the pool (Execute) or a slot.</summary>
    private sealed class Item(string name, ConcurrentQueue<string> log, Action? body = null) : IHandOff
    {
        [ThreadStatic]
        private static bool t_viaPool;

        internal string Name => name;

        internal TaskCompletionSource Ran { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        internal bool ViaPool { get; private set; }

        internal Thread? Thread { get; private set; }

        public void Execute()
        {
            t_viaPool = true;
            HandOff.Run(this);
        }

        public void InvokeContinuation()
        {
            // Execute marks the first item of a work item; every later one came through a slot.
            ViaPool = t_viaPool;
            t_viaPool = false;
            Thread = Thread.CurrentThread;
            log.Enqueue(name);
            body?.Invoke();
            Ran.TrySetResult();
        }
    }

    /// <summary>Owns a <see cref="ContinuationCore{TResult}"/> as the waiters do.</summary>
    private sealed class CoreOwner : IHandOff
    {
        // A field, not a property: the mutable struct is used in place, as its owners do.
        internal ContinuationCore<int> Core;

        private int _executions;

        internal int Executions => Volatile.Read(ref _executions);

        public void Execute() => HandOff.Run(this);

        public void InvokeContinuation()
        {
            Interlocked.Increment(ref _executions);
            Core.InvokeContinuation();
        }
    }

    /// <summary>A synchronization context with one thread of its own that counts what is posted to it.</summary>
    private sealed class RecordingContext : SynchronizationContext, IDisposable
    {
        private readonly BlockingCollection<(SendOrPostCallback, object?)> _queue = [];
        private readonly Thread _thread;
        private int _posts;

        internal RecordingContext()
        {
            _thread = new Thread(Loop) { IsBackground = true, Name = "RecordingContext" };
            _thread.Start();
        }

        internal TaskCompletionSource Started { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        internal int Posts => Volatile.Read(ref _posts);

        public override void Post(SendOrPostCallback d, object? state)
        {
            Interlocked.Increment(ref _posts);
            _queue.Add((d, state));
        }

        public void Dispose() => _queue.CompleteAdding();

        private void Loop()
        {
            SetSynchronizationContext(this);
            foreach ((SendOrPostCallback callback, object? state) in _queue.GetConsumingEnumerable())
            {
                callback(state);
                Started.TrySetResult();
            }
        }
    }
}
