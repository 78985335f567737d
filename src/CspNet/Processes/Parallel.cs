using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;
using CspNet.Internal.Processes;

namespace CspNet;

/// <summary>
/// Runs processes in parallel and ends when all of them have ended: the CSP <c>PAR</c>.
/// Thread processes (<see cref="ICSPProcess"/>) each get a thread from a
/// <see cref="CSPThreadPool"/>; async processes (<see cref="IAsyncCSPProcess"/>) run on the .NET
/// thread pool and hold no thread while they wait. One <see cref="Parallel"/> may mix both.
/// </summary>
/// <remarks>
/// <para>
/// Failure: a process that throws never vanishes silently. The others keep running (CSP has no
/// way to stop a process from outside); when all have ended, <see cref="Run"/> throws one
/// <see cref="AggregateException"/> holding every process's exception, and the task of
/// <see cref="RunAsync"/> faults with all of them in its <see cref="Task.Exception"/>, as
/// <see cref="Task.WhenAll(Task[])"/> does. Exceptions are never nested: a failed nested
/// <see cref="Parallel"/> contributes each of its processes' exceptions. A run whose token was
/// cancelled and whose every exception is an <see cref="OperationCanceledException"/> ends
/// canceled. To make the others end, a failing process poisons its channels (in a
/// <c>catch</c> or <c>finally</c>); processes blocked on them then get
/// <see cref="PoisonException"/>, poison their own channels in turn, and the network winds down.
/// </para>
/// <para>
/// Context: every process starts with the execution context (AsyncLocal values, culture) of the
/// <see cref="RunAsync"/> caller, or a clean one if the caller suppressed its flow, and nothing a
/// thread process sets is seen by the next process on its pool thread. Async processes are marked
/// as such, so that CspNet's blocking calls made inside them throw instead of blocking a
/// thread-pool thread (see <see cref="IAsyncCSPProcess"/>); thread processes are not.
/// </para>
/// <para>
/// A <see cref="Parallel"/> can be run again once a run has finished; runs may not overlap.
/// It is itself a process of both kinds, so parallels nest.
/// </para>
/// <para>Thread-safety: processes may be added from any thread, but not while a run is in progress.</para>
/// </remarks>
public sealed class Parallel : ICSPProcess, IAsyncCSPProcess
{
    private readonly List<Entry> _processes = [];
    private readonly Lock _lock = new();
    private bool _running;
    private CSPThreadPool _threadPool = CSPThreadPool.Default;

    /// <summary>Creates an empty parallel; add processes with <c>AddProcess</c>.</summary>
    public Parallel()
    {
    }

    /// <summary>Creates a parallel of thread processes.</summary>
    /// <param name="processes">The processes to run.</param>
    public Parallel(params ICSPProcess[] processes)
    {
        ArgumentNullException.ThrowIfNull(processes);
        foreach (ICSPProcess process in processes)
        {
            AddProcess(process);
        }
    }

    /// <summary>Creates a parallel of async processes.</summary>
    /// <param name="processes">The processes to run.</param>
    public Parallel(params IAsyncCSPProcess[] processes)
    {
        ArgumentNullException.ThrowIfNull(processes);
        foreach (IAsyncCSPProcess process in processes)
        {
            AddProcess(process);
        }
    }

    /// <summary>The pool whose threads run the thread processes; <see cref="CSPThreadPool.Default"/> unless set.</summary>
    /// <exception cref="ArgumentNullException">The value is null.</exception>
    public CSPThreadPool ThreadPool
    {
        get => _threadPool;
        set => _threadPool = value ?? throw new ArgumentNullException(nameof(value), "Pass a CSPThreadPool, for example CSPThreadPool.Default.");
    }

    /// <summary>Number of processes in the parallel.</summary>
    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _processes.Count;
            }
        }
    }

    /// <summary>Adds a thread process, run at normal priority.</summary>
    /// <param name="process">The process.</param>
    public void AddProcess(ICSPProcess process) => AddProcess(process, ThreadPriority.Normal);

    /// <summary>Adds a thread process, run at <paramref name="priority"/> (where the operating system honours priorities).</summary>
    /// <param name="process">The process.</param>
    /// <param name="priority">The priority of the thread while it runs this process.</param>
    public void AddProcess(ICSPProcess process, ThreadPriority priority)
    {
        ArgumentNullException.ThrowIfNull(process);

        // A nested parallel only waits for its children: run it without tying up a thread.
        Add(process is Parallel nested ? new Entry(null, nested, priority) : new Entry(process, null, priority));
    }

    /// <summary>Adds an async process.</summary>
    /// <param name="process">The process.</param>
    public void AddProcess(IAsyncCSPProcess process)
    {
        ArgumentNullException.ThrowIfNull(process);
        Add(new Entry(null, process, ThreadPriority.Normal));
    }

    /// <summary>Adds a nested parallel; it runs as an async process, holding no thread of its own.</summary>
    /// <param name="process">The nested parallel.</param>
    public void AddProcess(Parallel process)
    {
        ArgumentNullException.ThrowIfNull(process);
        Add(new Entry(null, process, ThreadPriority.Normal));
    }

    /// <summary>
    /// Adds a process that can run either way (implements both <see cref="ICSPProcess"/> and
    /// <see cref="IAsyncCSPProcess"/>); it runs as an async process, holding no thread while it waits.
    /// </summary>
    /// <typeparam name="TProcess">The process type.</typeparam>
    /// <param name="process">The process.</param>
    public void AddProcess<TProcess>(TProcess process)
        where TProcess : ICSPProcess, IAsyncCSPProcess
    {
        ArgumentNullException.ThrowIfNull(process);
        Add(new Entry(null, process, ThreadPriority.Normal));
    }

    /// <summary>Adds a thread process given as a delegate.</summary>
    /// <param name="run">The process body.</param>
    public void AddProcess(Action run)
    {
        ArgumentNullException.ThrowIfNull(run);
        AddProcess(new DelegateProcess(run));
    }

    /// <summary>Adds an async process given as a delegate.</summary>
    /// <param name="runAsync">The process body; it receives the token passed to <see cref="RunAsync"/>.</param>
    public void AddProcess(Func<CancellationToken, Task> runAsync)
    {
        ArgumentNullException.ThrowIfNull(runAsync);
        AddProcess(new AsyncDelegateProcess(runAsync));
    }

    /// <summary>
    /// Runs every process and blocks until all have ended.
    /// </summary>
    /// <exception cref="AggregateException">
    /// One or more processes threw. Its <see cref="AggregateException.InnerExceptions"/> hold every
    /// process's exception, not nested: all the exceptions of a failed nested <see cref="Parallel"/>
    /// (or of any async process whose task holds several) appear there directly.
    /// </exception>
    /// <exception cref="InvalidOperationException">
    /// This parallel is already running; or the caller is itself an async process, whose thread
    /// this would block (use <see cref="RunAsync"/>).
    /// </exception>
    /// <exception cref="ObjectDisposedException">It has thread processes and its <see cref="ThreadPool"/> is disposed.</exception>
    public void Run()
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Run()", "RunAsync()");
        Task run = RunAsync(CancellationToken.None);
        run.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing).GetAwaiter().GetResult();
        if (run.Exception is { } error)
        {
            // One exception holding them all; GetResult would rethrow only the first.
            throw new AggregateException("One or more processes of the Parallel threw.", error.InnerExceptions);
        }
    }

    /// <summary>
    /// Runs every process and completes when all have ended, holding no thread while it waits.
    /// </summary>
    /// <param name="cancellationToken">Passed to every async process; thread processes do not see it.</param>
    /// <returns>
    /// A task that completes when every process has ended. If one or more processes threw, it is
    /// faulted and its <see cref="Task.Exception"/> holds every process's exception directly, as
    /// <see cref="Task.WhenAll(Task[])"/> does (<c>await</c> rethrows the first of them). If
    /// <paramref name="cancellationToken"/> was cancelled and every exception is an
    /// <see cref="OperationCanceledException"/>, it is canceled instead.
    /// </returns>
    /// <exception cref="InvalidOperationException">This parallel is already running.</exception>
    /// <exception cref="ObjectDisposedException">It has thread processes and its <see cref="ThreadPool"/> is disposed.</exception>
    public Task RunAsync(CancellationToken cancellationToken = default)
    {
        Entry[] processes;
        CSPThreadPool pool = _threadPool;
        lock (_lock)
        {
            if (_running)
            {
                throw new InvalidOperationException("This Parallel is already running; wait for the run to end, or create another Parallel.");
            }

            if (_processes.Count == 0)
            {
                return Task.CompletedTask;
            }

            processes = [.. _processes];
            if (Array.Exists(processes, static entry => entry.Thread is not null))
            {
                // Refused before anything starts, so that no process of a half-started run is left behind.
                pool.ThrowIfDisposed();
            }

            _running = true;
        }

        var run = new ParallelRun(processes.Length, this, RunContexts.Capture(), cancellationToken);
        foreach (Entry entry in processes)
        {
            if (entry.Thread is { } threadProcess)
            {
                try
                {
                    pool.Start(() => run.RunThreadProcess(threadProcess), run.ProcessEnded, entry.Priority);
                }
                catch (ObjectDisposedException exception)
                {
                    // The pool was disposed after the check above: this process cannot start.
                    run.AddError(exception);
                    run.ProcessEnded();
                }
            }
            else
            {
                run.StartAsyncProcess(entry.Async!);
            }
        }

        return run.Completion;
    }

    Task IAsyncCSPProcess.RunAsync(CancellationToken cancellationToken) => RunAsync(cancellationToken);

    private void Add(Entry entry)
    {
        lock (_lock)
        {
            if (_running)
            {
                throw new InvalidOperationException("Processes cannot be added to a Parallel while it runs.");
            }

            _processes.Add(entry);
        }
    }

    private void EndRun()
    {
        lock (_lock)
        {
            _running = false;
        }
    }

    private readonly record struct Entry(ICSPProcess? Thread, IAsyncCSPProcess? Async, ThreadPriority Priority);

    /// <summary>Book-keeping of one run: counts processes down and gathers their exceptions.</summary>
    private sealed class ParallelRun(int count, Parallel owner, RunContexts contexts, CancellationToken cancellationToken)
    {
        private static readonly ContextCallback s_runThreadProcess = static state => ((ICSPProcess)state!).Run();

        private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly List<Exception> _errors = [];
        private readonly RunContexts _contexts = contexts;
        private int _remaining = count;

        internal Task Completion => _completion.Task;

        internal void RunThreadProcess(ICSPProcess process)
        {
            try
            {
                // Processes see the caller's AsyncLocal values and culture, as tasks do; Run
                // restores the pool thread's own context afterwards, so nothing the process set
                // is seen by the next process on this thread.
                ExecutionContext.Run(_contexts.ThreadProcesses, s_runThreadProcess, process);
            }
#pragma warning disable CA1031 // A process's exception is collected and rethrown by Run, never swallowed.
            catch (Exception exception)
#pragma warning restore CA1031
            {
                AddError(exception);
            }
        }

        internal void StartAsyncProcess(IAsyncCSPProcess process) =>
            // Start on the thread pool so that a process that computes before its first await
            // does not run to completion on the caller's thread, serialising the others.
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(new AsyncProcessStart(this, process), preferLocal: false);

        internal void ProcessEnded()
        {
            if (Interlocked.Decrement(ref _remaining) != 0)
            {
                return;
            }

            // Every process has ended, so every error has been added: no lock needed.
            owner.EndRun();
            if (_errors.Count == 0)
            {
                _completion.SetResult();
            }
            else if (cancellationToken.IsCancellationRequested && _errors.TrueForAll(static e => e is OperationCanceledException))
            {
                _completion.SetCanceled(cancellationToken);
            }
            else
            {
                // Each exception directly in the task's AggregateException, as Task.WhenAll does.
                _completion.SetException(_errors);
            }
        }

        internal void AddError(Exception exception)
        {
            lock (_errors)
            {
                _errors.Add(exception);
            }
        }

        private async Task RunAsyncProcess(IAsyncCSPProcess process)
        {
            Task? task = null;
            try
            {
                task = process.RunAsync(cancellationToken) ?? throw NullTaskError(process);
                await task.ConfigureAwait(false);
            }
#pragma warning disable CA1031 // Collected and rethrown by Run.
            catch (Exception exception)
#pragma warning restore CA1031
            {
                if (task is { Exception: { } taskError })
                {
                    // await rethrew only the first; a nested Parallel (or Task.WhenAll) holds more.
                    lock (_errors)
                    {
                        _errors.AddRange(taskError.InnerExceptions);
                    }
                }
                else
                {
                    AddError(exception);
                }
            }

            ProcessEnded();
        }

        private static InvalidOperationException NullTaskError(IAsyncCSPProcess process)
        {
            string name = process is AsyncDelegateProcess body
                ? $"The async process delegate {body.Name}"
                : $"The async process {process.GetType().FullName}";
            return new InvalidOperationException(
                $"{name} returned null from RunAsync. An async process must return a Task: " +
                "make RunAsync an async method, or return Task.CompletedTask when it has nothing to do.");
        }

        /// <summary>Starts one async process on the thread pool, in the run's context for async processes.</summary>
        private sealed class AsyncProcessStart(ParallelRun run, IAsyncCSPProcess process) : IThreadPoolWorkItem
        {
            private static readonly ContextCallback s_start = static state => ((AsyncProcessStart)state!).Start();

            public void Execute() => ExecutionContext.Run(run._contexts.AsyncProcesses, s_start, this);

            private void Start() => _ = run.RunAsyncProcess(process);
        }
    }
}
