using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>
/// Waiter for an async process: a reusable <see cref="IValueTaskSource{TResult}"/> (reads) and
/// <see cref="IValueTaskSource"/> (writes). While it is queued the process holds no thread.
/// </summary>
/// <remarks>
/// <para>
/// The continuation never runs on the partner's stack: the partner wakes this waiter after
/// leaving the channel lock, and running the awaiting process inline there would let one
/// process's code run inside another's channel operation (unbounded stack depth, surprising
/// re-entrancy). It goes to <see cref="HandOff"/> instead, which runs it next on the partner's
/// thread once the partner's current step is over (or on the thread pool).
/// </para>
/// <para>
/// A parked waiter is live for as long as its process is parked, and a program may park millions
/// (JVMCSP's live-process table), so it keeps only what a parked operation needs. It does not know
/// its owner: the owner keeps its reusable waiters (<see cref="WaiterCache"/>) and a waiter is
/// given back by clearing its rented mark, so no owner field is needed for that. Only a cancellable
/// operation needs the owner (its callback cancels through it), and it is kept with the
/// registration in a <see cref="CancellationBox"/> made on the waiter's first cancellable use and
/// reused after: operations that are never cancellable (the common case) pay for neither. The
/// error that ends an operation (poison) shares that field: a waiter is 96 bytes (T = int).
/// </para>
/// </remarks>
internal sealed class AsyncWaiter<T> : Waiter<T>, IValueTaskSource<T>, IValueTaskSource, IHandOff
{
    private static readonly Action<object?, CancellationToken> s_onCancel = OnCancel;

    private ContinuationCore<T> _core;

    // Null; or the error that ends the current operation (poison, a buffer's exception); or, once
    // the waiter served a cancellable operation, its CancellationBox, which then holds the error.
    // One field for two things few operations need: a parked waiter is live, and there may be
    // millions (every field is 8 bytes a parked process).
    private object? _extra;

    /// <summary>A waiter for one operation in the given direction, rented (see <see cref="TryRent"/>).</summary>
    internal AsyncWaiter(bool isReader)
    {
        IsReader = isReader;
        Rented = 1;
    }

    /// <summary>
    /// Takes this idle waiter for one operation. False if it is in use: an owner's cached waiter may
    /// still be busy (its process not yet resumed) when the next operation needs one.
    /// </summary>
    internal bool TryRent(bool isReader)
    {
        if (Interlocked.CompareExchange(ref Rented, 1, 0) != 0)
        {
            return false;
        }

        IsReader = isReader;
        return true;
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
    /// Registers cancellation; <paramref name="owner"/> is what the callback cancels through. Must
    /// happen before the waiter is queued: registering afterwards would race with a partner
    /// completing and recycling the waiter.
    /// </summary>
    internal void RegisterCancellation(IWaiterOwner<T> owner, CancellationToken cancellationToken)
    {
        // Before the operation parks, so no error is here yet (Discard cleared the last one).
        Debug.Assert(_extra is null or CancellationBox, "A waiter is registered before any error is set.");
        if (_extra is not CancellationBox box)
        {
            _extra = box = new CancellationBox();
        }

        box.Owner = owner;
        box.Registration = cancellationToken.UnsafeRegister(s_onCancel, this);
    }

    // The registration keeps its token: a cancellation that lost to a hold's claim is still visible here.
    internal override bool CancellationRequested => _extra is CancellationBox box && box.Registration.Token.IsCancellationRequested;

    internal override Exception CreateCancellation() => new OperationCanceledException((_extra as CancellationBox)?.Registration.Token ?? default);

    internal override Exception? Error
    {
        get => _extra is CancellationBox box ? box.Error : (Exception?)_extra;
        set
        {
            if (_extra is CancellationBox box)
            {
                box.Error = value;
            }
            else
            {
                _extra = value;
            }
        }
    }

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

        ControlPoint.AfterWake();
    }

    /// <summary>
    /// Gives back a waiter that was never handed out (the operation completed synchronously after
    /// all), or one whose result was read. Disposing the registration first waits out a callback
    /// already running, so no callback can touch the waiter once it can be rented again.
    /// </summary>
    internal void Discard()
    {
        if (CountedParked)
        {
            CountedParked = false;
            CoreMetrics.LeaveParked(CoreMetrics.AsyncKind);
        }

        if (_extra is CancellationBox box)
        {
            box.Registration.Dispose();
            box.Registration = default;
            box.Owner = null;
        }

        _core.Reset();
        ResetState(); // clears Error too

        // Last, and a release: whoever rents it next sees it reset.
        Volatile.Write(ref Rented, 0);
    }

    private static void OnCancel(object? state, CancellationToken cancellationToken)
    {
        var waiter = (AsyncWaiter<T>)state!;
        if (((CancellationBox)waiter._extra!).Owner!.TryCancel(waiter))
        {
            // The waiter is ours and unlinked: no partner can pair with it any more. Fail the
            // operation, outside the owner's lock. Nothing was delivered or taken.
            waiter._core.SetException(new OperationCanceledException(cancellationToken), waiter);
        }
    }

    /// <inheritdoc />
    public T GetResult(short token)
    {
        ThrowIfNotCompleted(token);
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
        ThrowIfNotCompleted(token);
        try
        {
            _core.GetResult(token);
        }
        finally
        {
            Discard();
        }
    }

    /// <summary>
    /// Rejects a result read with a stale token (a ValueTask awaited twice) or before completion,
    /// without recycling: the waiter may be parked for its next operation by now, and recycling it
    /// would unlink it from its queue and lose that operation.
    /// </summary>
    private void ThrowIfNotCompleted(short token)
    {
        if (_core.GetStatus(token) == ValueTaskSourceStatus.Pending)
        {
            throw new InvalidOperationException("The operation has not completed yet: await it rather than reading its result.");
        }
    }

    /// <inheritdoc />
    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    /// <inheritdoc />
    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags, this);

    void IHandOff.InvokeContinuation() => _core.InvokeContinuation();

    void IThreadPoolWorkItem.Execute() => HandOff.Run(this);

    /// <summary>
    /// What only a cancellable operation needs: its registration and the owner its callback cancels
    /// through; and, while the waiter has one, the error of <see cref="Error"/>.
    /// </summary>
    private sealed class CancellationBox
    {
        internal IWaiterOwner<T>? Owner;
        internal CancellationTokenRegistration Registration;
        internal Exception? Error;
    }
}
