using System;
using System.Diagnostics;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks.Sources;

namespace CspNet.Internal.Scheduling;

/// <summary>
/// The completion of one parked async operation, as an <see cref="IValueTaskSource{TResult}"/>
/// needs it: result or exception, version, and the awaiter's continuation. What
/// <see cref="ManualResetValueTaskSourceCore{TResult}"/> does with continuations run
/// asynchronously, except where the continuation goes: to <see cref="HandOff.Dispatch"/>, which
/// runs it next on the completing thread once that thread's current step is over, rather than
/// always on another thread-pool thread.
/// </summary>
/// <remarks>
/// <para>
/// Lives as a field of its owner (a mutable struct: never copy it). The continuation is never
/// run inside <see cref="SetResult"/> or <see cref="SetException"/>: a completing partner may be
/// in the middle of a channel operation, and running the awaiting process on its stack would nest
/// one process's code inside another's.
/// </para>
/// <para>
/// One exchange on <see cref="_continuation"/> both publishes the completion and decides who
/// dispatches the continuation, and the completing side touches nothing of the core after it
/// unless a continuation was registered. This matters because the owner is reused: an awaiter
/// that sees the operation complete reads the result and resets the core for its next operation
/// at once. A completion flag written before the continuation was examined (as
/// <see cref="ManualResetValueTaskSourceCore{TResult}"/> does) left a window in which the
/// completing thread could find the <em>next</em> operation's continuation and run it early, or
/// find a reset core. Once a continuation is registered, nobody resets the core until that
/// continuation has run (it is what reads the result), so the queue can hold the owner rather
/// than a copy of the continuation.
/// </para>
/// </remarks>
internal struct ContinuationCore<TResult>
{
    /// <summary>In <see cref="_continuation"/> once the operation has completed: the mark of completion.</summary>
    private static readonly Action<object?> s_completed = static _ => Debug.Fail("The completion mark is never run.");

    // Null while pending with no awaiter yet, the awaiter's continuation while it waits, and
    // s_completed once completed: the one word both sides exchange.
    private Action<object?>? _continuation;
    private object? _continuationState;

    // The continuation to run, once dispatched: kept apart from _continuation, which holds the mark.
    private Action<object?>? _dispatched;
    private ExceptionDispatchInfo? _error;
    private TResult? _result;
    private short _version;

    /// <summary>The token of the current operation.</summary>
    internal readonly short Version => _version;

    /// <summary>Makes the core ready for the next operation; the old token stops being valid.</summary>
    internal void Reset()
    {
        _version++;
        _continuation = null;
        _continuationState = null;
        _dispatched = null;
        _error = null;
        _result = default;
    }

    internal void SetResult(TResult result, IHandOff owner)
    {
        _result = result;
        SignalCompletion(owner);
    }

    internal void SetException(Exception error, IHandOff owner)
    {
        _error = ExceptionDispatchInfo.Capture(error);
        SignalCompletion(owner);
    }

    internal readonly ValueTaskSourceStatus GetStatus(short token)
    {
        ValidateToken(token);
        return !IsCompleted ? ValueTaskSourceStatus.Pending
            : _error is null ? ValueTaskSourceStatus.Succeeded
            : _error.SourceException is OperationCanceledException ? ValueTaskSourceStatus.Canceled
            : ValueTaskSourceStatus.Faulted;
    }

    internal readonly TResult GetResult(short token)
    {
        ValidateToken(token);
        if (!IsCompleted)
        {
            throw new InvalidOperationException("The operation has not completed yet: await it rather than reading its result.");
        }

        _error?.Throw();
        return _result!;
    }

    /// <summary>
    /// Registers the awaiter's continuation. If the operation completed meanwhile, the continuation
    /// is dispatched now (it still does not run on this stack).
    /// </summary>
    internal void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags, IHandOff owner)
    {
        ArgumentNullException.ThrowIfNull(continuation);
        ValidateToken(token);
        if ((flags & (ValueTaskSourceOnCompletedFlags.FlowExecutionContext | ValueTaskSourceOnCompletedFlags.UseSchedulingContext)) != 0
            && CapturedContinuation.TryCapture(continuation, state, flags) is { } captured)
        {
            continuation = CapturedContinuation.Invoke;
            state = captured;
        }

        // The state first: a completion that finds the continuation finds its state too (the
        // exchange below is a full fence).
        _continuationState = state;
        ControlPoint.Awaiting(owner);
        Action<object?>? previous = Interlocked.CompareExchange(ref _continuation, continuation, null);
        if (previous is null)
        {
            return;
        }

        if (!ReferenceEquals(previous, s_completed))
        {
            throw new InvalidOperationException("A CspNet operation's ValueTask may be awaited only once.");
        }

        // Completed between the awaiter's check and this registration: the completing side is
        // done with the core, so the continuation is dispatched from here.
        _dispatched = continuation;
        HandOff.Dispatch(owner);
    }

    /// <summary>Runs the continuation of the current completion: called by <see cref="HandOff"/>, once per completion.</summary>
    internal readonly void InvokeContinuation()
    {
        Action<object?>? continuation = _dispatched;
        Debug.Assert(continuation is not null, "Only a completion with a registered continuation is dispatched.");
        continuation(_continuationState);
    }

    private readonly bool IsCompleted => ReferenceEquals(Volatile.Read(in _continuation), s_completed);

    private void SignalCompletion(IHandOff owner)
    {
        // Publishes the result (written before this full fence) and learns whether an awaiter is
        // waiting. If none is, the awaiter may see the completion, read the result and reset the
        // core from now on, so nothing here may touch it again.
        Action<object?>? registered = Interlocked.Exchange(ref _continuation, s_completed);
        if (registered is null)
        {
            return;
        }

        if (ReferenceEquals(registered, s_completed))
        {
            throw new InvalidOperationException("A CspNet operation completed twice.");
        }

        // The awaiter waits for this continuation and will not touch the core before it runs.
        _dispatched = registered;
        HandOff.Dispatch(owner);
    }

    private readonly void ValidateToken(short token)
    {
        if (token != _version)
        {
            throw new InvalidOperationException("This ValueTask was already consumed: a CspNet operation's ValueTask may be awaited only once.");
        }
    }
}
