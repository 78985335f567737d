namespace CspNet.Tests.Alternation.Contract;

/// <summary>
/// The simulated network between a <see cref="DelayedChannelEnd{T}"/> and its <see cref="RemotePeer{T}"/>:
/// how long a request or a reply takes, and on which thread a pushed notification arrives.
/// </summary>
internal abstract class Latency
{
    /// <summary>No latency: every leg completes at once and every notification is delivered on the calling thread.</summary>
    internal static Latency None { get; } = new NoLatency();

    /// <summary>
    /// Tiny random delays: most legs complete at once, some after a thread-pool hop, a few after
    /// about a millisecond. Notifications arrive on another thread now and then, some twice, some
    /// late (after a newer one).
    /// </summary>
    internal static Latency Random { get; } = new RandomLatency();

    /// <summary>One leg of a round trip (request or reply). A leg that honours <paramref name="cancellationToken"/> throws <see cref="OperationCanceledException"/>.</summary>
    internal abstract ValueTask TravelAsync(CancellationToken cancellationToken);

    /// <summary>Delivers a pushed notification, now on this thread or later on another one, possibly twice.</summary>
    internal abstract void Post(Action deliver);

    private sealed class NoLatency : Latency
    {
        internal override ValueTask TravelAsync(CancellationToken cancellationToken) => ValueTask.CompletedTask;

        internal override void Post(Action deliver) => deliver();
    }

    private sealed class RandomLatency : Latency
    {
        internal override async ValueTask TravelAsync(CancellationToken cancellationToken)
        {
            int dice = System.Random.Shared.Next(1000);
            if (dice < 800)
            {
                return;
            }

            if (dice < 998)
            {
                await Task.Yield();
                return;
            }

            await Task.Delay(1, cancellationToken).ConfigureAwait(false);
        }

        internal override void Post(Action deliver)
        {
            int dice = System.Random.Shared.Next(1000);
            if (dice < 700)
            {
                deliver();
            }
            else if (dice < 990)
            {
                ThreadPool.UnsafeQueueUserWorkItem(static d => d(), deliver, preferLocal: false);
            }
            else if (dice < 995)
            {
                // Duplicated: once now, once from another thread.
                deliver();
                ThreadPool.UnsafeQueueUserWorkItem(static d => d(), deliver, preferLocal: false);
            }
            else
            {
                // Late: after about a millisecond, by when newer notifications have overtaken it.
                _ = Task.Delay(1).ContinueWith(static (_, d) => ((Action)d!)(), deliver, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
            }
        }
    }
}

/// <summary>
/// A network that lets its first <c>legsThrough</c> legs pass at once and holds every later one
/// until the test opens the gate (or the leg's token fires), so that a test can act while a
/// reservation's request or reply is in flight. Notifications arrive at once.
/// </summary>
internal sealed class GatedLatency(int legsThrough = 0) : Latency
{
    private readonly TaskCompletionSource _waiting = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _gate = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _legs;

    /// <summary>Completes when a leg is held at the gate.</summary>
    internal Task LegWaiting => _waiting.Task;

    /// <summary>Lets the held leg, and every later one, through.</summary>
    internal void Open() => _gate.TrySetResult();

    internal override async ValueTask TravelAsync(CancellationToken cancellationToken)
    {
        if (Interlocked.Increment(ref _legs) <= legsThrough)
        {
            return;
        }

        _waiting.TrySetResult();
        await _gate.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
    }

    internal override void Post(Action deliver) => deliver();
}
