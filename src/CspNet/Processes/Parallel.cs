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
/// allocates nothing per process or per nested parallel: one walk per run starts the whole tree
/// depth first, each async process from a thread-pool work item that queues the next one before
/// it runs its process, and every process of the
/// run, however deeply nested, reports its end through one delegate and one count kept by the
/// run. A nested parallel is started by the walk, without a task of its own, and is finished
/// (its processes' exceptions collected, ready to run again) when the whole run ends. Only a run
/// started by <see cref="RunAsync"/> allocates a task.
/// </para>
/// </remarks>
public sealed partial class Parallel : ICSPProcess, IAsyncCSPProcess
{
    // Processes (an IAsyncCSPProcess, a nested Parallel, or a ThreadEntry) are kept as
    // Parallel.Storage.cs says. The next index the run's walk looks at (see RootRun), and a
    // mark of the walk that finishes the run:
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
        : this((ReadOnlySpan<ICSPProcess>)(processes ?? throw new ArgumentNullException(nameof(processes))))
    {
    }

    /// <summary>
    /// Creates a parallel of thread processes; <c>new Parallel(a, b)</c> binds here and allocates no
    /// array for its arguments.
    /// </summary>
    /// <param name="processes">The processes to run.</param>
    public Parallel(params ReadOnlySpan<ICSPProcess> processes)
    {
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
        : this((ReadOnlySpan<IAsyncCSPProcess>)(processes ?? throw new ArgumentNullException(nameof(processes))))
    {
    }

    /// <summary>
    /// Creates a parallel of async processes; <c>new Parallel(a, b)</c> binds here and allocates no
    /// array for its arguments (JVMCSP's program makes two such parallels per iteration, millions).
    /// </summary>
    /// <param name="processes">The processes to run.</param>
    public Parallel(params ReadOnlySpan<IAsyncCSPProcess> processes)
    {
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
        : this((ReadOnlySpan<Parallel>)(processes ?? throw new ArgumentNullException(nameof(processes))))
    {
    }

    /// <summary>
    /// Creates a parallel of nested parallels; <c>new Parallel(a, b)</c> binds here and allocates
    /// no array for its arguments. They run as async processes.
    /// </summary>
    /// <param name="processes">The nested parallels.</param>
    public Parallel(params ReadOnlySpan<Parallel> processes)
        : this((ReadOnlySpan<IAsyncCSPProcess>)processes)
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

        // The run holds one count of its own until its walk has started every process, so that none
        // can end it early.
        root.AddProcesses(CountOwnProcesses());
        root.Start();
        return root.Task;
    }

    Task IAsyncCSPProcess.RunAsync(CancellationToken cancellationToken) => RunAsync(cancellationToken);

    private object ThreadItem(ICSPProcess process, ThreadPriority priority) =>
        // A nested parallel only waits for its children: run it without tying up a thread.
        process is Parallel nested ? nested : new ThreadEntry(this, process, priority);

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

    /// <summary>Processes the run counts for this parallel: all but the nested parallels, which count their own.</summary>
    private int CountOwnProcesses()
    {
        // Read once: adds are refused while a run is in progress.
        int count = _count;
        int processes = 0;
        for (int i = 0; i < count; i++)
        {
            if (ProcessAt(i) is not Parallel)
            {
                processes++;
            }
        }

        return processes;
    }

    /// <summary>Runs async process <paramref name="index"/> of this parallel; called by the run's walk, on a pool thread, in the run's context for async processes.</summary>
    private void StartAsyncProcess(int index)
    {
        object process = ProcessAt(index);
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

        // The task is looked at again only when the whole run has ended (see RootRun.Finish), so one
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

    /// <summary>
    /// A thread process and the priority of its thread: its own start on the pool (an
    /// <see cref="IPooledStart"/>), so that starting it allocates nothing.
    /// </summary>
    private sealed class ThreadEntry(Parallel owner, ICSPProcess process, ThreadPriority priority) : IPooledStart
    {
        private static readonly ContextCallback s_run = static state => ((ICSPProcess)state!).Run();

        public ThreadPriority Priority { get; } = priority;

        /// <summary>Starts the process on the parallel's pool, as part of the current run.</summary>
        internal void Start()
        {
            try
            {
                owner.ThreadPool.Start(this);
            }
            catch (ObjectDisposedException exception)
            {
                // The pool was disposed after the check in TryBeginRun: this process cannot start.
                owner.AddError(exception);
                owner.ProcessEnded();
            }
        }

        public void Run()
        {
            bool counted = CoreMetrics.EnterLive(CoreMetrics.ThreadKind);
            try
            {
                // Processes see the caller's AsyncLocal values and culture, as tasks do; Run
                // restores the pool thread's own context afterwards, so nothing the process set
                // is seen by the next process on this thread.
                ExecutionContext.Run(owner.Root.ThreadContext, s_run, process);
            }
#pragma warning disable CA1031 // A process's exception is collected and rethrown by Run, never swallowed.
            catch (Exception exception)
#pragma warning restore CA1031
            {
                owner.AddError(exception);
            }
            finally
            {
                if (counted)
                {
                    CoreMetrics.LeaveLive(CoreMetrics.ThreadKind);
                }
            }
        }

        public void Ended() => owner.ProcessEnded();
    }
}
