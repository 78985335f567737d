using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Processes;
using CspNet.Internal.Scheduling;

namespace CspNet;

public sealed partial class Parallel
{
    /// <summary>
    /// What a run started by <see cref="RunAsync"/> shares with its nested parallels: contexts,
    /// token, every exception of the whole tree (they are never nested), the task, and the walk
    /// that starts the tree's processes.
    /// </summary>
    /// <remarks>
    /// <para>
    /// The walk visits the tree depth first, one process at a time: a thread process is started
    /// when it is reached, a nested parallel is marked running and entered, and an async process is
    /// run by a step of its own, a thread-pool work item. Each step first moves the walk on to the
    /// next async process and queues the next step to its thread's local queue, where an idle
    /// thread steals it at once, then runs its process; so a process that computes before its
    /// first await does not hold up the others, and one step is in flight per run, however many
    /// parallels it nests. A step runs as a chain of hand-offs (<see cref="HandOff.Run"/>), so the
    /// processes its process wakes run next on its thread. Only the party holding the walk (the
    /// caller of <see cref="RunAsync"/>, then each step until it has queued the next) touches it:
    /// no lock, no atomics; the queue publishes it.
    /// </para>
    /// <para>
    /// The next step was also tried as a hand-off into the thread's next-run slot (no work item:
    /// 6M -> 96K work items at JVMCSP's 10.5M): better under load (fewer wake-ups), but it runs a
    /// run's starts one after another on one thread, and on a quiet 2-core machine 400 trivial
    /// processes took 62 us instead of 41, 200 nested pairs 136 instead of 98 (the record in
    /// benchmarks/CspNet.PaperTables/README.md).
    /// </para>
    /// <para>
    /// Why one walk per run and not one work item per parallel: JVMCSP's program nests 3 million
    /// parallels of two processes; starting each from the caller's thread queued 3 million items
    /// to the global queue at once, whose segments lived (and were copied by the GC) until it
    /// drained, and every enqueue from outside the pool asked for another worker thread (200 nested
    /// pairs took 2.5 times as long as 400 processes in one parallel, and allocated 4.5 KB).
    /// </para>
    /// </remarks>
    private sealed class RootRun : TaskCompletionSource, IHandOff
    {
        private static readonly ContextCallback s_step = static state => ((RootRun)state!).Step();

        private readonly Parallel _parallel;
        private List<Exception>? _errors;
        private ExecutionContext? _threadContext;

        // Processes of the whole tree that have not ended, plus one held by the walk until it has
        // started them all (processes of parallels it has not entered yet are not counted yet).
        private long _remaining = 1;

        // The walk: the parallel it is in (its _nextToStart is the next process to look at), the
        // parallels it will go back to, and the async process it found for the next work item.
        private Parallel _at;
        private Parallel[]? _enclosing;
        private int _depth;
        private Parallel? _nextOwner;
        private int _nextIndex;

        internal RootRun(Parallel parallel, ExecutionContext asyncContext, CancellationToken token)
            : base(TaskCreationOptions.RunContinuationsAsynchronously)
        {
            _parallel = parallel;
            _at = parallel;
            AsyncContext = asyncContext;
            Token = token;
            OnProcessEnded = ProcessEnded;
        }

        /// <summary>Counts a process of the tree down: one delegate for every process of the run, however nested.</summary>
        internal Action OnProcessEnded { get; }

        internal ExecutionContext AsyncContext { get; }

        internal CancellationToken Token { get; }

        /// <summary>The context for thread processes, derived on first need (most runs have none).</summary>
        internal ExecutionContext ThreadContext =>
            _threadContext ?? Interlocked.CompareExchange(ref _threadContext, RunContexts.ForThreadProcesses(AsyncContext), null) ?? _threadContext;

        /// <summary>
        /// Starts the walk from the caller of <see cref="RunAsync"/>: up to the first async process
        /// here (thread processes before it start now), the rest from the thread pool.
        /// </summary>
        internal void Start()
        {
            if (TryFindNextAsyncProcess())
            {
                System.Threading.ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
            }
            else
            {
                ProcessEnded();
            }
        }

        internal void AddProcesses(int count) => Interlocked.Add(ref _remaining, count);

        internal void ProcessEnded()
        {
            if (Interlocked.Decrement(ref _remaining) == 0)
            {
                Finish();
                Complete();
            }
        }

        internal void AddError(Exception exception)
        {
            List<Exception> errors = _errors ?? Interlocked.CompareExchange(ref _errors, [], null) ?? _errors;
            lock (errors)
            {
                errors.Add(exception);
            }
        }

        /// <summary>From the thread pool: starts a chain of hand-offs with the next step of the walk.</summary>
        void IThreadPoolWorkItem.Execute() => HandOff.Run(this);

        /// <summary>Runs the async process the walk found, in the run's context.</summary>
        void IHandOff.InvokeContinuation() => ExecutionContext.Run(AsyncContext, s_step, this);

        private void Step()
        {
            Parallel owner = _nextOwner!;
            int index = _nextIndex;

            // Queue the next start before running this process (see the remarks). After the queue
            // call the walk belongs to whoever runs that item: nothing here touches it again.
            if (TryFindNextAsyncProcess())
            {
                // To this thread's local queue, where an idle thread steals it at once (see the remarks).
                System.Threading.ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: true);
            }
            else
            {
                // Every process is counted now: the walk's own count can go (this process holds one).
                ProcessEnded();
            }

            owner.StartAsyncProcess(index);
        }

        /// <summary>
        /// Moves the walk on to the next async process of the tree, starting the thread processes
        /// and entering the nested parallels it passes; false when the whole tree has been walked.
        /// </summary>
        private bool TryFindNextAsyncProcess()
        {
            while (true)
            {
                Parallel at = _at;
                int index = at._nextToStart;
                if (index >= at._count)
                {
                    if (_depth == 0)
                    {
                        _nextOwner = null;
                        return false;
                    }

                    _at = _enclosing![--_depth];
                    _enclosing[_depth] = null!;
                    continue;
                }

                at._nextToStart = index + 1;
                switch (at.ProcessAt(index))
                {
                    case ThreadEntry thread:
                        thread.Start();
                        break;
                    case Parallel nested:
                        if (Enter(nested))
                        {
                            Push(ref _enclosing, _depth++, at);
                            _at = nested;
                        }

                        break;
                    default:
                        _nextOwner = at;
                        _nextIndex = index;
                        return true;
                }
            }
        }

        /// <summary>Marks a nested parallel running as part of this run and counts its processes; false if there is nothing to walk in it.</summary>
        private bool Enter(Parallel nested)
        {
            if (!nested.TryBeginRun(this, out bool empty))
            {
                AddError(AlreadyRunning());
                return false;
            }

            if (empty)
            {
                return false;
            }

            AddProcesses(nested.CountOwnProcesses());
            return true;
        }

        /// <summary>
        /// Every process of the run has ended: collects the async processes' exceptions of every
        /// parallel the run started and makes each runnable again. Depth first, with the walk's
        /// array of enclosing parallels (deep enough: the walk entered every parallel this enters),
        /// not recursion: nesting may be deeper than the thread's stack. A parallel's
        /// <c>_nextToStart</c> counts down from -1 here, which marks it visited: one added twice
        /// to the tree was started (and is finished) once.
        /// </summary>
        private void Finish()
        {
            Parallel at = _parallel;
            at._nextToStart = -1;
            int depth = 0;
            while (true)
            {
                int index = -1 - at._nextToStart;
                if (index >= at._count)
                {
                    // Its tasks are read and its nested parallels finished: from here on it may run again.
                    Volatile.Write(ref at._owner, null);
                    if (depth == 0)
                    {
                        return;
                    }

                    at = _enclosing![--depth];
                    _enclosing[depth] = null!;
                    continue;
                }

                at._nextToStart = -2 - index;
                object process = at.ProcessAt(index);
                if (process is Parallel nested)
                {
                    if (nested._owner == this && nested._nextToStart >= 0)
                    {
                        Push(ref _enclosing, depth++, at);
                        nested._nextToStart = -1;
                        at = nested;
                    }
                }
                else if (process is not ThreadEntry && at.TakeTask(index) is { } task)
                {
                    AddErrors(this, task);
                }
            }
        }

        private static void Push(ref Parallel[]? stack, int depth, Parallel parallel)
        {
            if (stack is null || depth == stack.Length)
            {
                Array.Resize(ref stack, Math.Max(4, 2 * depth));
            }

            stack[depth] = parallel;
        }

        /// <summary>Every process of the tree has ended, so every error has been added: no lock needed.</summary>
        private void Complete()
        {
            Debug.Assert(_depth == 0, "The walk has gone back up to the root.");
            if (_errors is not { } errors)
            {
                SetResult();
            }
            else if (Token.IsCancellationRequested && errors.TrueForAll(static e => e is OperationCanceledException))
            {
                SetCanceled(Token);
            }
            else
            {
                // Each exception directly in the task's AggregateException, as Task.WhenAll does.
                SetException(errors);
            }
        }
    }
}
