using System;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace CspNet.Internal.Scheduling;

/// <summary>
/// A continuation that must run in a context its awaiter captured: an execution context
/// (<see cref="ValueTaskSourceOnCompletedFlags.FlowExecutionContext"/>) or a synchronization
/// context or task scheduler (<see cref="ValueTaskSourceOnCompletedFlags.UseSchedulingContext"/>).
/// </summary>
/// <remarks>
/// Rare, so it costs an object: an <c>await</c> in an async method asks for neither context (its
/// state machine restores its own execution context), and on a thread-pool thread there is no
/// scheduling context to capture. Only <c>await</c> without <c>ConfigureAwait(false)</c> under a
/// synchronization context (a UI thread, some test runners), or an awaiter's safe
/// <c>OnCompleted</c>, gets here. The hand-off runs <see cref="Invoke"/> like any continuation; it
/// posts to the captured context, so the awaiting code still runs where it expects.
/// </remarks>
internal sealed class CapturedContinuation
{
    /// <summary>The continuation that stands for a captured one: its state is the <see cref="CapturedContinuation"/>.</summary>
    internal static readonly Action<object?> Invoke = static state => ((CapturedContinuation)state!).Run();

    private static readonly ContextCallback s_runInContext = static state => ((CapturedContinuation)state!).RunHere();
    private static readonly SendOrPostCallback s_post = static state => ((CapturedContinuation)state!).RunInExecutionContext();
    private static readonly Action<object?> s_onScheduler = static state => ((CapturedContinuation)state!).RunInExecutionContext();

    private readonly Action<object?> _continuation;
    private readonly object? _state;
    private readonly ExecutionContext? _executionContext;
    private readonly object? _scheduler;

    private CapturedContinuation(Action<object?> continuation, object? state, ExecutionContext? executionContext, object? scheduler)
    {
        _continuation = continuation;
        _state = state;
        _executionContext = executionContext;
        _scheduler = scheduler;
    }

    /// <summary>Captures what <paramref name="flags"/> ask for; null if there is nothing to capture.</summary>
    internal static CapturedContinuation? TryCapture(Action<object?> continuation, object? state, ValueTaskSourceOnCompletedFlags flags)
    {
        ExecutionContext? executionContext = (flags & ValueTaskSourceOnCompletedFlags.FlowExecutionContext) != 0 ? ExecutionContext.Capture() : null;
        object? scheduler = null;
        if ((flags & ValueTaskSourceOnCompletedFlags.UseSchedulingContext) != 0)
        {
            // The base SynchronizationContext and the default scheduler both mean "the thread pool":
            // nothing to go back to.
            if (SynchronizationContext.Current is { } context && context.GetType() != typeof(SynchronizationContext))
            {
                scheduler = context;
            }
            else if (TaskScheduler.Current != TaskScheduler.Default)
            {
                scheduler = TaskScheduler.Current;
            }
        }

        return executionContext is null && scheduler is null ? null : new CapturedContinuation(continuation, state, executionContext, scheduler);
    }

    private void Run()
    {
        switch (_scheduler)
        {
            case SynchronizationContext context:
                context.Post(s_post, this);
                break;
            case TaskScheduler scheduler:
                _ = Task.Factory.StartNew(s_onScheduler, this, CancellationToken.None, TaskCreationOptions.DenyChildAttach, scheduler);
                break;
            default:
                RunInExecutionContext();
                break;
        }
    }

    private void RunInExecutionContext()
    {
        if (_executionContext is null)
        {
            RunHere();
        }
        else
        {
            ExecutionContext.Run(_executionContext, s_runInContext, this);
        }
    }

    private void RunHere() => _continuation(_state);
}
