using System;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>
/// Waiter for an async process: a pooled <see cref="IValueTaskSource{TResult}"/> (reads) and
/// <see cref="IValueTaskSource"/> (writes). While it is queued the process holds no thread.
/// </summary>
/// <remarks>
/// The continuation never runs on the partner's stack: the partner wakes this waiter after
/// leaving the channel lock, and running the awaiting process inline there would let one
/// process's code run inside another's channel operation (unbounded stack depth, surprising
/// re-entrancy). It goes to <see cref="HandOff"/> instead, which runs it next on the partner's
/// thread once the partner's current step is over (or on the thread pool).
/// </remarks>
internal sealed class AsyncWaiter<T> : Waiter<T>, IValueTaskSource<T>, IValueTaskSource, IHandOff
{
    private static readonly Action<object?, CancellationToken> s_onCancel = OnCancel;

    private ContinuationCore<T> _core;
    private readonly IWaiterOwner<T> _owner;
    private CancellationTokenRegistration _registration;

    internal AsyncWaiter(IWaiterOwner<T> owner, bool isReader)
    {
        _owner = owner;
        IsReader = isReader;
    }

    internal ValueTask<T> AsReadTask()
    {
        CountedParked = CoreMetrics.EnterParked(CoreMetrics.AsyncKind);
        return new(this, _core.Version);
    }

    internal ValueTask AsWriteTask()
    {
        CountedParked = CoreMetrics.EnterParked(CoreMetrics.AsyncKind);
        return new(this, _core.Version);
    }

    /// <summary>
    /// Registers cancellation. Must happen before the waiter is queued: registering afterwards
    /// would race with a partner completing and recycling the waiter.
    /// </summary>
    internal void RegisterCancellation(CancellationToken cancellationToken) =>
        _registration = cancellationToken.UnsafeRegister(s_onCancel, this);

    // The registration keeps its token: a cancellation that lost to a hold's claim is still visible here.
    internal override bool CancellationRequested => _registration.Token.IsCancellationRequested;

    internal override Exception CreateCancellation() => new OperationCanceledException(_registration.Token);

    internal override void Wake()
    {
        if (Error is { } error)
        {
            _core.SetException(error, this);
        }
        else
        {
            _core.SetResult(IsReader ? Item! : default!, this);
        }
    }

    /// <summary>
    /// Recycles a waiter that was never handed out (the operation completed synchronously after
    /// all). Disposing the registration first waits out a callback already running, so no
    /// callback can touch the waiter once it is back in the pool.
    /// </summary>
    internal void Discard()
    {
        if (CountedParked)
        {
            CountedParked = false;
            CoreMetrics.LeaveParked(CoreMetrics.AsyncKind);
        }

        _registration.Dispose();
        _registration = default;
        Recycle();
    }

    private static void OnCancel(object? state, CancellationToken cancellationToken)
    {
        var waiter = (AsyncWaiter<T>)state!;
        if (waiter._owner.TryCancel(waiter))
        {
            // The waiter is ours and unlinked: no partner can pair with it any more. Fail the
            // operation, outside the owner's lock. Nothing was delivered or taken.
            waiter._core.SetException(new OperationCanceledException(cancellationToken), waiter);
        }
    }

    /// <inheritdoc />
    public T GetResult(short token)
    {
        try
        {
            return _core.GetResult(token);
        }
        finally
        {
            Discard();
        }
    }

    void IValueTaskSource.GetResult(short token)
    {
        try
        {
            _core.GetResult(token);
        }
        finally
        {
            Discard();
        }
    }

    /// <inheritdoc />
    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    /// <inheritdoc />
    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags, this);

    void IHandOff.InvokeContinuation() => _core.InvokeContinuation();

    void IThreadPoolWorkItem.Execute() => HandOff.Run(this);

    private void Recycle()
    {
        _core.Reset();
        ResetState();
        _owner.ReturnWaiter(this);
    }
}
