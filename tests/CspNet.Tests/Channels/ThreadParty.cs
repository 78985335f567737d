namespace CspNet.Tests.Channels;

/// <summary>
/// A blocking thread process on a dedicated thread, with a task that completes when it ends.
/// The thread is a background thread, so a test that times out cannot keep the run alive.
/// </summary>
internal sealed class ThreadParty<TResult>
{
    private readonly TaskCompletionSource<TResult> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Thread _thread;

    private ThreadParty(Func<TResult> body)
    {
        _thread = new Thread(() =>
        {
            try
            {
                _completion.SetResult(body());
            }
#pragma warning disable CA1031 // The exception is handed to the test through the task.
            catch (Exception exception)
#pragma warning restore CA1031
            {
                _completion.SetException(exception);
            }
        })
        {
            IsBackground = true,
            Name = "ThreadParty",
        };
    }

    /// <summary>Completes with the body's result or fails with its exception.</summary>
    internal Task<TResult> Completion => _completion.Task;

    internal static ThreadParty<TResult> Start(Func<TResult> body)
    {
        var party = new ThreadParty<TResult>(body);
        party._thread.Start();
        return party;
    }

    /// <summary>Interrupts the party's thread (<see cref="Thread.Interrupt"/>).</summary>
    internal void Interrupt() => _thread.Interrupt();

    /// <summary>
    /// Waits, without any timing assumption, until the thread is blocked (in a wait) or has ended.
    /// A test starts a party whose only blocking call is the channel operation under test, so
    /// "blocked" means "parked in that operation"; a party that should have blocked but did not is
    /// seen as ended, which the test then reports.
    /// </summary>
    /// <remarks>
    /// A thread can also show as blocked for a moment for other reasons (a contended lock in the
    /// runtime). That only makes a check weaker, never wrong: the test then merely fails to prove
    /// that the operation would have completed too early.
    /// </remarks>
    internal void WaitUntilBlockedOrEnded()
    {
        while ((_thread.ThreadState & (System.Threading.ThreadState.WaitSleepJoin | System.Threading.ThreadState.Stopped)) == 0 && !Completion.IsCompleted)
        {
            Thread.Yield();
        }
    }
}

internal static class ThreadParty
{
    internal static ThreadParty<T> Start<T>(Func<T> body) => ThreadParty<T>.Start(body);

    internal static ThreadParty<bool> Start(Action body) => ThreadParty<bool>.Start(() =>
    {
        body();
        return true;
    });
}

/// <summary>
/// A step counter a party advances as it goes, so the test knows which statement it has reached
/// (for example "about to write") without any timing assumption.
/// </summary>
internal sealed class Steps
{
    private int _value;

    internal int Value => Volatile.Read(ref _value);

    internal void Reach(int step) => Volatile.Write(ref _value, step);

    /// <summary>Waits until the party has reached <paramref name="step"/> (the party must get there).</summary>
    internal void WaitFor(int step) => SpinWait.SpinUntil(() => Value >= step);
}
