using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using CspNet.Internal.Processes;

namespace CspNet;

/// <summary>
/// The operating-system threads that run <see cref="ICSPProcess"/> processes (paper section 3.4).
/// A thread is created only when a process starts and no idle thread is available; when its
/// process ends, the thread is kept idle for the next process until <see cref="Release"/>. So a
/// program never has more pool threads than thread processes that ran at the same time.
/// </summary>
/// <remarks>
/// <para>
/// Unlike the .NET thread pool, this pool lets the program choose each thread's maximum stack
/// size (<see cref="MaxStackSize"/>: many frugal processes fit in less memory) and each process's
/// priority. Pool threads are background threads: they do not keep the application alive.
/// </para>
/// <para>
/// <see cref="Dispose"/> ends the pool's threads: idle ones at once, busy ones as soon as their
/// process ends. <see cref="Default"/> is shared and cannot be disposed.
/// </para>
/// <para>Thread-safety: all members are safe to call from any thread.</para>
/// </remarks>
public sealed class CSPThreadPool : IDisposable
{
    private readonly Lock _lock = new();
    private readonly Stack<PooledThread> _idle = new();
    private readonly Queue<StartRequest> _queued = new();
    private int _maxStackSize;
    private int _waking;
    private int _threadCount;
    private int _busyCount;
    private int _nextId;
    private bool _disposed;

    /// <summary>Most threads woken for a start and not yet running at any time (see <see cref="Start"/>).</summary>
    internal const int MaxWaking = 32;

    /// <summary>Threads a starting caller wakes itself; the threads it wakes wake the others.</summary>
    private static readonly int StarterWakes = Math.Min(Environment.ProcessorCount, MaxWaking);

    /// <summary>Creates a pool whose threads get the runtime's default stack size.</summary>
    public CSPThreadPool()
    {
    }

    /// <summary>Creates a pool whose threads get at most <paramref name="maxStackSize"/> bytes of stack.</summary>
    /// <param name="maxStackSize">Stack size in bytes; 0 means the runtime default.</param>
    public CSPThreadPool(int maxStackSize)
    {
        MaxStackSize = maxStackSize;
    }

    /// <summary>The pool <see cref="Parallel"/> uses unless told otherwise.</summary>
    public static CSPThreadPool Default { get; } = new();

    /// <summary>
    /// Maximum stack size, in bytes, of threads created from now on; 0 (the default) means the
    /// runtime default (usually 1 MiB on Windows, 8 MiB on Linux). Changing it releases the idle
    /// threads, so that every process started afterwards runs on a thread of the new size.
    /// The operating system may round the size up: to its page size or minimum, and on Linux
    /// glibc may hand a new thread a cached stack of an exited thread that is up to four times
    /// larger. The size is what the pool asks for; it bounds memory use only up to that rounding.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public int MaxStackSize
    {
        get => Volatile.Read(ref _maxStackSize);
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            lock (_lock)
            {
                if (_maxStackSize == value)
                {
                    return;
                }

                _maxStackSize = value;
            }

            Release();
        }
    }

    /// <summary>Number of live pool threads, busy or idle.</summary>
    public int ThreadCount => Volatile.Read(ref _threadCount);

    /// <summary>Number of pool threads running a process now.</summary>
    public int BusyCount => Volatile.Read(ref _busyCount);

    /// <summary>Number of idle pool threads kept for reuse.</summary>
    public int IdleCount
    {
        get
        {
            lock (_lock)
            {
                return _idle.Count;
            }
        }
    }

    /// <summary>
    /// Ends every idle thread. Busy threads finish their process and are then kept as usual;
    /// threads are created again on demand.
    /// </summary>
    public void Release()
    {
        PooledThread[] released;
        lock (_lock)
        {
            released = _idle.ToArray();
            _idle.Clear();
        }

        foreach (PooledThread thread in released)
        {
            thread.Exit();
        }
    }

    /// <summary>
    /// Ends the pool's threads: idle threads at once; a thread running a process when its process
    /// ends. Processes already running are not disturbed. Starting a process afterwards (running a
    /// <see cref="Parallel"/> whose <see cref="Parallel.ThreadPool"/> is this pool) throws
    /// <see cref="ObjectDisposedException"/>. Calling it again does nothing.
    /// </summary>
    /// <exception cref="InvalidOperationException">This is <see cref="Default"/>, which every <see cref="Parallel"/> shares.</exception>
    public void Dispose()
    {
        if (ReferenceEquals(this, Default))
        {
            throw new InvalidOperationException(
                "CSPThreadPool.Default is shared by every Parallel that was not given a pool of its own, so it cannot be disposed. " +
                "Call Release() to end its idle threads, or give your Parallels a pool you create (and dispose).");
        }

        lock (_lock)
        {
            _disposed = true;
        }

        Release();
    }

    /// <summary>Throws if the pool is disposed: checked by <see cref="Parallel"/> before it starts any process.</summary>
    internal void ThrowIfDisposed()
    {
        lock (_lock)
        {
            ThrowIfDisposedLocked();
        }
    }

    /// <summary>
    /// Runs <paramref name="work"/> on a pool thread at its priority, then puts the thread back in
    /// the pool, then calls its <see cref="IPooledStart.Ended"/> on it. Neither may throw;
    /// <see cref="Parallel"/> wraps each process so that it does not.
    /// </summary>
    /// <remarks>
    /// Waking a parked thread costs the waker a kernel call and, on a busy machine, a wait for a
    /// core; a parallel of 400 thread processes paid 400 of them in a row, and short processes
    /// ended long before the last wake-up. So starts go into a queue, and the caller wakes at most
    /// one thread per core (<see cref="StarterWakes"/>) itself. Every thread that wakes for a start
    /// first hands up to two more queued starts to other threads (at most
    /// <see cref="MaxWaking"/> on their way at once): the wake-ups are spread over the woken
    /// threads, and every queued start gets a thread of its own whatever the running processes do,
    /// so processes that wait for each other all run. And a thread whose process ends takes the
    /// next queued start itself, with no wake-up at all: short processes run one after another on
    /// the few threads that are awake.
    /// </remarks>
    /// <exception cref="ObjectDisposedException">The pool is disposed.</exception>
    internal void Start(IPooledStart work)
    {
        PooledThread? thread;
        int stackSize;
        StartRequest start;
        lock (_lock)
        {
            ThrowIfDisposedLocked();
            _queued.Enqueue(new StartRequest(work));
            if (_waking >= StarterWakes)
            {
                // Threads are on their way already: each hands on queued starts as it wakes, and
                // each thread whose process ends takes the next one.
                return;
            }

            start = _queued.Dequeue();
            stackSize = SendThreadLocked(out thread);
        }

        Hand(thread, stackSize, start);
    }

    /// <summary>Counts a thread on its way to a start: an idle one, or null for a new one; returns the stack size for a new one.</summary>
    private int SendThreadLocked(out PooledThread? thread)
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "Called under the pool's lock.");
        _waking++;
        _busyCount++;
        _idle.TryPop(out thread);
        return _maxStackSize;
    }

    /// <summary>Gives <paramref name="start"/> to <paramref name="thread"/>, or to a new thread if it is null.</summary>
    private void Hand(PooledThread? thread, int stackSize, StartRequest start)
    {
        if (thread is null)
        {
            // A failure to create a thread (the machine is out of threads or memory) is fatal on
            // a woken pool thread, as it is for the runtime's own pool.
            thread = new PooledThread(this, stackSize, Interlocked.Increment(ref _nextId));
            Interlocked.Increment(ref _threadCount);
            thread.Assign(start);
            thread.Start();
        }
        else
        {
            thread.Assign(start);
        }
    }

    /// <summary>
    /// A thread woken (or created) for a start is running: it no longer counts as on its way, and
    /// hands up to two queued starts to other threads before it runs its own.
    /// </summary>
    private void CheckIn()
    {
        PooledThread? first = null;
        PooledThread? second = null;
        int stackSize = 0;
        StartRequest? firstStart = null;
        StartRequest? secondStart = null;
        lock (_lock)
        {
            _waking--;

            // Two, so that a long queue of processes that block reaches MaxWaking threads on their
            // way in a few rounds of wake-ups; none once the queue is empty.
            if (_queued.TryDequeue(out StartRequest start))
            {
                firstStart = start;
                stackSize = SendThreadLocked(out first);
                if (_waking < MaxWaking && _queued.TryDequeue(out start))
                {
                    secondStart = start;
                    SendThreadLocked(out second);
                }
            }
        }

        if (firstStart is { } one)
        {
            Hand(first, stackSize, one);
        }

        if (secondStart is { } two)
        {
            Hand(second, stackSize, two);
        }
    }

    /// <summary>
    /// Called by a thread whose process has ended, before it reports the end: the thread is back
    /// in the pool by the time anyone can observe that its process finished. Returns the next
    /// queued start for it to run instead of parking, if there is one.
    /// </summary>
    private StartRequest? ReturnToPool(PooledThread thread)
    {
        lock (_lock)
        {
            _busyCount--;
            if (!_disposed && thread.StackSize == _maxStackSize)
            {
                if (_queued.TryDequeue(out StartRequest next))
                {
                    _busyCount++;
                    return next;
                }

                _idle.Push(thread);
                return null;
            }
        }

        // The pool was disposed, or the stack size changed, while it ran: the thread is not kept.
        // Queued starts do not need it: the threads on their way hand them on.
        thread.Exit();
        return null;
    }

    private void ThrowIfDisposedLocked()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "Called under the pool's lock.");
        if (_disposed)
        {
            throw new ObjectDisposedException(
                nameof(CSPThreadPool),
                "This CSPThreadPool has been disposed and starts no more processes. Run the Parallel on another pool " +
                "(set Parallel.ThreadPool to a new CSPThreadPool, or to CSPThreadPool.Default).");
        }
    }

    private void OnThreadExited() => Interlocked.Decrement(ref _threadCount);

    /// <summary>A process to run (a struct, so that the queue and the handing on allocate nothing).</summary>
    private readonly record struct StartRequest(IPooledStart Work);

    /// <summary>One pool thread: waits for work, runs it, returns itself to the pool.</summary>
    private sealed class PooledThread
    {
        private readonly CSPThreadPool _pool;
        private readonly Thread _thread;
        private readonly object _gate = new();
        private StartRequest? _start;
        private bool _exit;

        internal PooledThread(CSPThreadPool pool, int stackSize, int id)
        {
            _pool = pool;
            StackSize = stackSize;
            _thread = new Thread(Loop, stackSize)
            {
                IsBackground = true,
                Name = $"CSP process thread {id}",
            };
        }

        internal int StackSize { get; }

        // Not Start(): that would make the creating caller's execution context the thread's own
        // for its whole life. Each process runs in the context its Parallel gives it.
        internal void Start() => _thread.UnsafeStart();

        internal void Assign(StartRequest start)
        {
            lock (_gate)
            {
                _start = start;
                Monitor.PulseAll(_gate);
            }
        }

        internal void Exit()
        {
            lock (_gate)
            {
                _exit = true;
                Monitor.PulseAll(_gate);
            }
        }

        private void Loop()
        {
            while (true)
            {
                StartRequest start;
                lock (_gate)
                {
                    while (_start is null && !_exit)
                    {
                        Monitor.Wait(_gate);
                    }

                    if (_start is not { } assigned)
                    {
                        _pool.OnThreadExited();
                        return;
                    }

                    start = assigned;
                    _start = null;
                }

                _pool.CheckIn();
                RunAll(start);
            }
        }

        /// <summary>Runs a start, then the queued starts the pool hands this thread as each one ends.</summary>
        private void RunAll(StartRequest start)
        {
            StartRequest? next = start;
            while (next is { } current)
            {
                SetPriority(current.Work.Priority);
                current.Work.Run();

                // Back in the pool before the end is reported, so that whoever observes the end
                // (a Parallel starting its next run, a test) sees the thread as reusable.
                next = _pool.ReturnToPool(this);
                current.Work.Ended();
            }
        }

        private void SetPriority(ThreadPriority priority)
        {
            if (_thread.Priority == priority)
            {
                return;
            }

            try
            {
                _thread.Priority = priority;
            }
            catch (ThreadStateException)
            {
                // Cannot happen for a running thread; priorities are a hint on every OS anyway.
            }
        }
    }
}
