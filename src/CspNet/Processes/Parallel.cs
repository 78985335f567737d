using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
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
/// <para>
/// Thread-safety: processes may be added from any thread, but not while a run is in progress. A
/// parallel is its own lock (it saves an object per parallel where programs hold millions): do
/// not lock a <see cref="Parallel"/> object in your own code.
/// </para>
/// <para>
/// Cost: a parallel of up to two processes is one object (64 bytes); more processes move into
/// one array (a slot per process, and one for the task of a running async process). A run
/// allocates nothing per process or per nested parallel: async processes are started by queuing
/// the parallel itself to the thread pool, each execution queuing it again for the next one,
/// and every process of the run, however deeply nested, reports its end through one delegate and
/// one count kept by the run. A nested parallel is started directly by its parent, without a task
/// of its own, and is finished (its processes' exceptions collected, ready to run again) when the
/// whole run ends. Only a run started by <see cref="RunAsync"/> allocates a task.
/// </para>
/// </remarks>
public sealed partial class Parallel : ICSPProcess, IAsyncCSPProcess, IThreadPoolWorkItem
{
    private static readonly ContextCallback s_startNextInContext = static state => ((Parallel)state!).StartNextAsyncProcess();

    // Processes (an IAsyncCSPProcess, a nested Parallel, or a ThreadEntry) are kept as
    // Parallel.Storage.cs says. The next index a pool start takes:
    private int _nextToStart;

    // The run this parallel is part of (it started it, or an ancestor did), or null when idle: a
    // parallel is running exactly while this is set.
    private RootRun? _owner;

    // A pool other than CSPThreadPool.Default, kept outside the object: few parallels set one,
    // and a field would cost every parallel 8 bytes (the object would grow from 64 to 72).
    private static readonly ConditionalWeakTable<Parallel, CSPThreadPool> s_threadPools = new();

    /// <summary>Creates an empty parallel; add processes with <c>AddProcess</c>.</summary>
    public Parallel()
    {
    }

    /// <summary>Creates a parallel of thread processes.</summary>
    /// <param name="processes">The processes to run.</param>
    public Parallel(params ICSPProcess[] processes)
    {
        ArgumentNullException.ThrowIfNull(processes);
        Reserve(processes.Length);
        foreach (ICSPProcess process in processes)
        {
            ArgumentNullException.ThrowIfNull(process);
            Append(ThreadItem(process, ThreadPriority.Normal));
        }
    }

    /// <summary>Creates a parallel of async processes.</summary>
    /// <param name="processes">The processes to run.</param>
    public Parallel(params IAsyncCSPProcess[] processes)
    {
        ArgumentNullException.ThrowIfNull(processes);

        // Room for the tasks too, so that a run never has to grow the array.
        Reserve(processes.Length);
        foreach (IAsyncCSPProcess process in processes)
        {
            ArgumentNullException.ThrowIfNull(process);
            Append(process);
        }
    }

    /// <summary>
    /// Creates a parallel of nested parallels (a parallel is both kinds of process, so the other
    /// two constructors would be ambiguous for them). They run as async processes.
    /// </summary>
    /// <param name="processes">The nested parallels.</param>
    public Parallel(params Parallel[] processes)
        : this((IAsyncCSPProcess[])processes)
    {
    }

    /// <summary>The pool whose threads run the thread processes; <see cref="CSPThreadPool.Default"/> unless set.</summary>
    /// <exception cref="ArgumentNullException">The value is null.</exception>
    public CSPThreadPool ThreadPool
    {
        get => s_threadPools.TryGetValue(this, out CSPThreadPool? pool) ? pool : CSPThreadPool.Default;
        set => s_threadPools.AddOrUpdate(this, value ?? throw new ArgumentNullException(nameof(value), "Pass a CSPThreadPool, for example CSPThreadPool.Default."));
    }

    /// <summary>Number of processes in the parallel.</summary>
    public int Count => Volatile.Read(ref _count);

    /// <summary>Adds a thread process, run at normal priority.</summary>
    /// <param name="process">The process.</param>
    public void AddProcess(ICSPProcess process) => AddProcess(process, ThreadPriority.Normal);

    /// <summary>Adds a thread process, run at <paramref name="priority"/> (where the operating system honours priorities).</summary>
    /// <param name="process">The process.</param>
    /// <param name="priority">The priority of the thread while it runs this process.</param>
    public void AddProcess(ICSPProcess process, ThreadPriority priority)
    {
        ArgumentNullException.ThrowIfNull(process);
        Add(ThreadItem(process, priority));
    }

    /// <summary>Adds an async process.</summary>
    /// <param name="process">The process.</param>
    public void AddProcess(IAsyncCSPProcess process)
    {
        ArgumentNullException.ThrowIfNull(process);
        Add(process);
    }

    /// <summary>Adds a nested parallel; it runs as an async process, holding no thread of its own.</summary>
    /// <param name="process">The nested parallel.</param>
    public void AddProcess(Parallel process)
    {
        ArgumentNullException.ThrowIfNull(process);
        Add(process);
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
        Add(process);
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
        var root = new RootRun(this, RunContexts.CaptureForAsyncProcesses(), cancellationToken);
        if (!TryBeginRun(root, out bool empty))
        {
            throw AlreadyRunning();
        }

        if (empty)
        {
            return Task.CompletedTask;
        }

        StartAll(root);

        // The run held one count of its own while processes started, so that none could end it early.
        root.ProcessEnded();
        return root.Task;
    }

    Task IAsyncCSPProcess.RunAsync(CancellationToken cancellationToken) => RunAsync(cancellationToken);

    /// <summary>
    /// Starts the next async process of the current run: a parallel queues itself to the thread
    /// pool for its async processes (an implementation detail; calling it does nothing useful).
    /// </summary>
    void IThreadPoolWorkItem.Execute()
    {
        if (_owner is not null)
        {
            ExecutionContext.Run(Root.AsyncContext, s_startNextInContext, this);
        }
    }

    private static object ThreadItem(ICSPProcess process, ThreadPriority priority) =>
        // A nested parallel only waits for its children: run it without tying up a thread.
        process is Parallel nested ? nested : new ThreadEntry(process, priority);

    private static InvalidOperationException AlreadyRunning() =>
        new("This Parallel is already running; wait for the run to end, or create another Parallel.");

    /// <summary>The run this parallel is part of.</summary>
    private RootRun Root => _owner!;

    private void Add(object item)
    {
        lock (this)
        {
            if (_owner is not null)
            {
                throw new InvalidOperationException("Processes cannot be added to a Parallel while it runs.");
            }

            Append(item);
        }
    }

    /// <summary>Marks the parallel running as part of <paramref name="root"/> and makes room for the tasks; false if it runs already.</summary>
    private bool TryBeginRun(RootRun root, out bool empty)
    {
        lock (this)
        {
            empty = _count == 0;
            if (_owner is not null)
            {
                return false;
            }

            if (empty)
            {
                return true;
            }

            ReserveTaskSlots();
            if (HasProcessesOfKind(asyncProcesses: false))
            {
                // Refused before anything starts, so that no process of a half-started run is left behind.
                ThreadPool.ThrowIfDisposed();
            }

            _owner = root;
            _nextToStart = 0;
            return true;
        }
    }

    /// <summary>
    /// Starts every process: thread processes on the pool, nested parallels here (they only
    /// start their own processes), async processes by queuing this parallel once for each, so that
    /// a process that computes before its first await does not serialise the others.
    /// </summary>
    private void StartAll(RootRun root)
    {
        // Every process but the nested parallels (which count their own) is counted in the run
        // before any starts. Read once: the last start may let this parallel's processes end
        // before the loop does (the run cannot end meanwhile: it holds a count of its own).
        int count = _count;
        int processes = 0;
        for (int i = 0; i < count; i++)
        {
            if (ProcessAt(i) is not Parallel)
            {
                processes++;
            }
        }

        root.AddProcesses(processes);
        ExecutionContext? threadContext = null;
        CSPThreadPool? pool = null;
        bool hasAsync = false;
        for (int i = 0; i < count; i++)
        {
            switch (ProcessAt(i))
            {
                case ThreadEntry thread:
                    threadContext ??= root.ThreadContext;
                    pool ??= ThreadPool;
                    StartThreadProcess(thread, threadContext, pool);
                    break;
                case Parallel nested:
                    StartNested(nested, root);
                    break;
                default:
                    hasAsync = true;
                    break;
            }
        }

        if (hasAsync)
        {
            // One work item for all the async processes: each execution queues the next before it
            // runs its own (see StartNextAsyncProcess).
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    private void StartThreadProcess(ThreadEntry thread, ExecutionContext context, CSPThreadPool pool)
    {
        try
        {
            pool.Start(() => RunThreadProcess(thread.Process, context), OnProcessEnded, thread.Priority);
        }
        catch (ObjectDisposedException exception)
        {
            // The pool was disposed after the check in TryBeginRun: this process cannot start.
            AddError(exception);
            ProcessEnded();
        }
    }

    private void RunThreadProcess(ICSPProcess process, ExecutionContext context)
    {
        bool counted = CoreMetrics.EnterLive(CoreMetrics.ThreadKind);
        try
        {
            // Processes see the caller's AsyncLocal values and culture, as tasks do; Run
            // restores the pool thread's own context afterwards, so nothing the process set
            // is seen by the next process on this thread.
            ExecutionContext.Run(context, static state => ((ICSPProcess)state!).Run(), process);
        }
#pragma warning disable CA1031 // A process's exception is collected and rethrown by Run, never swallowed.
        catch (Exception exception)
#pragma warning restore CA1031
        {
            AddError(exception);
        }
        finally
        {
            if (counted)
            {
                CoreMetrics.LeaveLive(CoreMetrics.ThreadKind);
            }
        }
    }

    /// <summary>Starts a nested parallel as part of this run: its processes report their ends and exceptions to the run.</summary>
    private static void StartNested(Parallel nested, RootRun root)
    {
        if (!nested.TryBeginRun(root, out bool empty))
        {
            root.AddError(AlreadyRunning());
            return;
        }

        if (!empty)
        {
            nested.StartAll(root);
        }
    }

    /// <summary>Starts the next async process; runs on a pool thread, in the run's context for async processes.</summary>
    private void StartNextAsyncProcess()
    {
        int count = _count;
        int index;
        object process;
        do
        {
            // Thread processes and nested parallels were started by StartAll: skip them.
            index = Interlocked.Increment(ref _nextToStart) - 1;
            if (index >= count)
            {
                return;
            }

            process = ProcessAt(index);
        }
        while (process is ThreadEntry or Parallel);

        // Queue the start of the next async process before running this one, so that a process
        // that computes before its first await does not serialise the others (another pool thread
        // steals it from this thread's local queue). One work item in flight per parallel, rather
        // than one per process queued at once: at JVMCSP's sizes the global queue held millions
        // of items, in segments that lived (and were copied by the GC) until it drained.
        for (int next = index + 1; next < count; next++)
        {
            if (ProcessAt(next) is not (ThreadEntry or Parallel))
            {
                System.Threading.ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: true);
                break;
            }
        }

        var asyncProcess = (IAsyncCSPProcess)process;
        bool counted = CoreMetrics.EnterLive(CoreMetrics.AsyncKind);
        Task task;
        try
        {
            task = asyncProcess.RunAsync(Root.Token) ?? throw NullTaskError(asyncProcess);
        }
#pragma warning disable CA1031 // Collected and rethrown by Run.
        catch (Exception exception)
#pragma warning restore CA1031
        {
            AddError(exception);
            AsyncProcessEnded(counted);
            return;
        }

        if (task.IsCompleted)
        {
            AddErrors(Root, task);
            AsyncProcessEnded(counted);
            return;
        }

        // The task is looked at again only when the whole run has ended (see FinishRun), so one
        // delegate, the run's, serves every process of the run. A process counted in
        // cspnet.process.live gets a delegate of its own that counts it out: an allocation only
        // while someone listens, rather than a field in every parallel (a program may hold millions).
        SetTask(index, task);
        task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(counted ? () => AsyncProcessEnded(counted: true) : OnProcessEnded);
    }

    private Action OnProcessEnded => Root.OnProcessEnded;

    private void AsyncProcessEnded(bool counted)
    {
        if (counted)
        {
            CoreMetrics.LeaveLive(CoreMetrics.AsyncKind);
        }

        ProcessEnded();
    }

    private void ProcessEnded() => Root.ProcessEnded();

    /// <summary>
    /// Every process of the run has ended: collects the async processes' exceptions of this
    /// parallel and of every nested parallel the run started, and makes each runnable again.
    /// Walks the tree with a stack of its own: nesting may be deeper than the thread's stack.
    /// </summary>
    private void FinishRun(RootRun root)
    {
        var pending = new Stack<Parallel>();
        pending.Push(this);
        while (pending.TryPop(out Parallel? parallel))
        {
            // A parallel added twice to the tree was started (and is finished) once.
            if (parallel._owner != root)
            {
                continue;
            }

            int count = parallel._count;
            for (int i = 0; i < count; i++)
            {
                object process = parallel.ProcessAt(i);
                if (process is Parallel nested)
                {
                    pending.Push(nested);
                }
                else if (process is not ThreadEntry && parallel.TakeTask(i) is { } task)
                {
                    AddErrors(root, task);
                }
            }

            // From here on this parallel may be run again.
            Volatile.Write(ref parallel._owner, null);
        }
    }

    /// <summary>The exceptions of a completed process task: all those it holds, as a nested Parallel holds several.</summary>
    private static void AddErrors(RootRun root, Task task)
    {
        if (task.IsFaulted)
        {
            foreach (Exception exception in task.Exception!.InnerExceptions)
            {
                root.AddError(exception);
            }
        }
        else if (task.IsCanceled)
        {
            // What awaiting it would throw.
            root.AddError(new TaskCanceledException(task));
        }
    }

    private void AddError(Exception exception) => Root.AddError(exception);

    private static InvalidOperationException NullTaskError(IAsyncCSPProcess process)
    {
        string name = process is AsyncDelegateProcess body
            ? $"The async process delegate {body.Name}"
            : $"The async process {process.GetType().FullName}";
        return new InvalidOperationException(
            $"{name} returned null from RunAsync. An async process must return a Task: " +
            "make RunAsync an async method, or return Task.CompletedTask when it has nothing to do.");
    }

    /// <summary>A thread process and the priority of its thread.</summary>
    private sealed class ThreadEntry(ICSPProcess process, ThreadPriority priority)
    {
        internal ICSPProcess Process { get; } = process;

        internal ThreadPriority Priority { get; } = priority;
    }

    /// <summary>
    /// What a run started by <see cref="RunAsync"/> shares with its nested parallels: contexts,
    /// token, every exception of the whole tree (they are never nested), and the task.
    /// </summary>
    private sealed class RootRun : TaskCompletionSource
    {
        private readonly Parallel _parallel;
        private List<Exception>? _errors;
        private ExecutionContext? _threadContext;

        // Processes of the whole tree that have not ended, plus one held while they start.
        private long _remaining = 1;

        internal RootRun(Parallel parallel, ExecutionContext asyncContext, CancellationToken token)
            : base(TaskCreationOptions.RunContinuationsAsynchronously)
        {
            _parallel = parallel;
            AsyncContext = asyncContext;
            Token = token;
            OnProcessEnded = ProcessEnded;
        }

        /// <summary>Counts a process of the tree down: one delegate for every process of the run, however nested.</summary>
        internal Action OnProcessEnded { get; }

        internal void AddProcesses(int count) => Interlocked.Add(ref _remaining, count);

        internal void ProcessEnded()
        {
            if (Interlocked.Decrement(ref _remaining) == 0)
            {
                _parallel.FinishRun(this);
                Complete();
            }
        }

        internal ExecutionContext AsyncContext { get; }

        internal CancellationToken Token { get; }

        /// <summary>The context for thread processes, derived on first need (most runs have none).</summary>
        internal ExecutionContext ThreadContext =>
            _threadContext ?? Interlocked.CompareExchange(ref _threadContext, RunContexts.ForThreadProcesses(AsyncContext), null) ?? _threadContext;

        internal void AddError(Exception exception)
        {
            List<Exception> errors = _errors ?? Interlocked.CompareExchange(ref _errors, [], null) ?? _errors;
            lock (errors)
            {
                errors.Add(exception);
            }
        }

        /// <summary>Every process of the tree has ended, so every error has been added: no lock needed.</summary>
        private void Complete()
        {
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
