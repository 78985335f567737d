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
/// <para>Thread-safety: processes may be added from any thread, but not while a run is in progress.</para>
/// <para>
/// Cost: a parallel is one object and one array (its processes, and a slot per process for the
/// task of a running async process). A run allocates nothing per process: async processes are
/// started by queuing the parallel itself to the thread pool once per process, each start taking
/// the next one, and their tasks are watched through one delegate per parallel. A nested
/// parallel is started directly by its parent and reports its end and its exceptions to it,
/// without a task of its own. Only a run started by <see cref="RunAsync"/> allocates a task.
/// </para>
/// </remarks>
public sealed class Parallel : ICSPProcess, IAsyncCSPProcess, IThreadPoolWorkItem
{
    // _state values.
    private const int Idle = 0;
    private const int Running = 1;

    private static readonly object?[] s_empty = [];
    private static readonly ContextCallback s_startNextInContext = static state => ((Parallel)state!).StartNextAsyncProcess();

    // Processes in [0, _count): an IAsyncCSPProcess, a nested Parallel, or a ThreadEntry. While a
    // run is in progress, slot _count + i holds the task of async process i until the run ends
    // (so the array is at least 2 x _count long then). Adds lock the array itself (see LockItems),
    // which saves a lock object per parallel: a program may hold millions of parallels.
    private object?[] _items = s_empty;
    private int _count;
    private int _state;

    // Processes of the current run that have not ended; the next index a pool start takes.
    private int _remaining;
    private int _nextToStart;

    // During a run: the parent Parallel of a nested run, or the RootRun of a run started by RunAsync.
    private object? _owner;

    // Counts one async process down when its task completes; made on first need, kept for later runs.
    private Action? _onProcessEnded;

    // A pool other than CSPThreadPool.Default, kept outside the object: few parallels set one,
    // and a field would cost every parallel 8 bytes (the object would grow from 56 to 64).
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
        _items = new object?[2 * processes.Length];
        foreach (ICSPProcess process in processes)
        {
            ArgumentNullException.ThrowIfNull(process);
            _items[_count++] = ThreadItem(process, ThreadPriority.Normal);
        }
    }

    /// <summary>Creates a parallel of async processes.</summary>
    /// <param name="processes">The processes to run.</param>
    public Parallel(params IAsyncCSPProcess[] processes)
    {
        ArgumentNullException.ThrowIfNull(processes);

        // Room for the tasks too, so that a run never has to grow the array.
        _items = new object?[2 * processes.Length];
        foreach (IAsyncCSPProcess process in processes)
        {
            ArgumentNullException.ThrowIfNull(process);
            _items[_count++] = process;
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
        if (!TryBeginRun(out bool empty))
        {
            throw AlreadyRunning();
        }

        if (empty)
        {
            return Task.CompletedTask;
        }

        var root = new RootRun(RunContexts.CaptureForAsyncProcesses(), cancellationToken);
        _owner = root;
        StartAll(root);
        return root.Task;
    }

    Task IAsyncCSPProcess.RunAsync(CancellationToken cancellationToken) => RunAsync(cancellationToken);

    /// <summary>
    /// Starts the next async process of the current run: a parallel queues itself to the thread
    /// pool once per async process (an implementation detail; calling it does nothing useful).
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

    /// <summary>The run started by <see cref="RunAsync"/> that this run is part of.</summary>
    private RootRun Root
    {
        get
        {
            object? owner = _owner;
            while (owner is Parallel parent)
            {
                owner = parent._owner;
            }

            return (RootRun)owner!;
        }
    }

    /// <summary>
    /// Locks the process array. It is replaced only while locked, so a locker that finds it
    /// replaced meanwhile retries on the new one (at most once per growth).
    /// </summary>
    private object?[] LockItems()
    {
        while (true)
        {
            object?[] items = Volatile.Read(ref _items);
            Monitor.Enter(items);
            if (ReferenceEquals(items, _items))
            {
                return items;
            }

            Monitor.Exit(items);
        }
    }

    private void Add(object item)
    {
        object?[] items = LockItems();
        try
        {
            if (_state != Idle)
            {
                throw new InvalidOperationException("Processes cannot be added to a Parallel while it runs.");
            }

            if (_count == items.Length)
            {
                var grown = new object?[Math.Max(4, 2 * items.Length)];
                Array.Copy(items, grown, _count);
                Volatile.Write(ref _items, grown);
            }

            _items[_count] = item;
            Volatile.Write(ref _count, _count + 1);
        }
        finally
        {
            Monitor.Exit(items);
        }
    }

    /// <summary>Marks the parallel running and makes room for the tasks; false if it runs already.</summary>
    private bool TryBeginRun(out bool empty)
    {
        object?[] items = LockItems();
        try
        {
            empty = _count == 0;
            if (_state != Idle)
            {
                return false;
            }

            if (empty)
            {
                return true;
            }

            if (items.Length < 2 * _count)
            {
                var grown = new object?[2 * _count];
                Array.Copy(items, grown, _count);
                Volatile.Write(ref _items, grown);
            }

            if (HasThreadProcesses())
            {
                // Refused before anything starts, so that no process of a half-started run is left behind.
                ThreadPool.ThrowIfDisposed();
            }

            _state = Running;
            _remaining = _count;
            _nextToStart = 0;
            return true;
        }
        finally
        {
            Monitor.Exit(items);
        }
    }

    private bool HasThreadProcesses()
    {
        for (int i = 0; i < _count; i++)
        {
            if (_items[i] is ThreadEntry)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Starts every process: thread processes on the pool, nested parallels here (they only
    /// start their own processes), async processes by queuing this parallel once for each, so that
    /// a process that computes before its first await does not serialise the others.
    /// </summary>
    private void StartAll(RootRun root)
    {
        // Read once: the last start may let the run end, and the parallel be run again, before the loop ends.
        object?[] items = _items;
        int count = _count;
        ExecutionContext? threadContext = null;
        CSPThreadPool? pool = null;
        for (int i = 0; i < count; i++)
        {
            switch (items[i])
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
                    System.Threading.ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
                    break;
            }
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

    /// <summary>Starts a nested parallel as part of this run: it reports its end and its exceptions here.</summary>
    private void StartNested(Parallel nested, RootRun root)
    {
        if (!nested.TryBeginRun(out bool empty))
        {
            AddError(AlreadyRunning());
            ProcessEnded();
            return;
        }

        if (empty)
        {
            ProcessEnded();
            return;
        }

        nested._owner = this;
        nested.StartAll(root);
    }

    /// <summary>Starts the next async process; runs on a pool thread, in the run's context for async processes.</summary>
    private void StartNextAsyncProcess()
    {
        object?[] items = _items;
        int count = _count;
        int index;
        do
        {
            // Thread processes and nested parallels were started by StartAll: skip them.
            index = Interlocked.Increment(ref _nextToStart) - 1;
            if (index >= count)
            {
                return;
            }
        }
        while (items[index] is ThreadEntry or Parallel);

        var process = (IAsyncCSPProcess)items[index]!;
        bool counted = CoreMetrics.EnterLive(CoreMetrics.AsyncKind);
        Task task;
        try
        {
            task = process.RunAsync(Root.Token) ?? throw NullTaskError(process);
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
            AddErrors(task);
            AsyncProcessEnded(counted);
            return;
        }

        // The task is looked at again only when the whole run has ended (see Finish), so one
        // delegate serves every process of this parallel. A process counted in cspnet.process.live
        // gets a delegate of its own that counts it out: an allocation only while someone listens,
        // rather than a field in every parallel (a program may hold millions).
        items[count + index] = task;
        task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(counted ? () => AsyncProcessEnded(counted: true) : OnProcessEnded);
    }

    private Action OnProcessEnded => _onProcessEnded ?? Interlocked.CompareExchange(ref _onProcessEnded, ProcessEnded, null) ?? _onProcessEnded;

    private void AsyncProcessEnded(bool counted)
    {
        if (counted)
        {
            CoreMetrics.LeaveLive(CoreMetrics.AsyncKind);
        }

        ProcessEnded();
    }

    private void ProcessEnded()
    {
        if (Interlocked.Decrement(ref _remaining) == 0)
        {
            Finish();
        }
    }

    /// <summary>Every process has ended: collects the async processes' exceptions and reports the end.</summary>
    private void Finish()
    {
        object?[] items = _items;
        int count = _count;
        for (int i = count; i < 2 * count; i++)
        {
            if (items[i] is Task task)
            {
                items[i] = null;
                AddErrors(task);
            }
        }

        object? owner = _owner;
        _owner = null;

        // From here on the parallel may be run again.
        Volatile.Write(ref _state, Idle);
        if (owner is Parallel parent)
        {
            parent.ProcessEnded();
        }
        else
        {
            ((RootRun)owner!).Complete();
        }
    }

    /// <summary>The exceptions of a completed process task: all those it holds, as a nested Parallel holds several.</summary>
    private void AddErrors(Task task)
    {
        if (task.IsFaulted)
        {
            foreach (Exception exception in task.Exception!.InnerExceptions)
            {
                AddError(exception);
            }
        }
        else if (task.IsCanceled)
        {
            // What awaiting it would throw.
            AddError(new TaskCanceledException(task));
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
    private sealed class RootRun(ExecutionContext asyncContext, CancellationToken token)
        : TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    {
        private List<Exception>? _errors;
        private ExecutionContext? _threadContext;

        internal ExecutionContext AsyncContext { get; } = asyncContext;

        internal CancellationToken Token { get; } = token;

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
        internal void Complete()
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
