using System;
using System.Collections.Generic;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Processes;
using CspNet.Remote;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.NameServer;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CspNet;

/// <summary>
/// Runs processes in parallel, once each, on the workers of remote worker pools when there are
/// free ones and on local threads otherwise (paper sections 2.3 and 3.5, listing 6).
/// </summary>
/// <remarks>
/// <para>
/// <see cref="Run"/> returns when every process has run once. All of them run at the same time,
/// each on a worker of its own (a remote worker or a local thread), so processes that talk to
/// each other over named channels (listing 6) work wherever they land. A process sent to a pool
/// travels with its fields and its code (docs/WORKERPOOL.md): it must reach what it shares with
/// other processes by name, inside <c>Run()</c>, as listings 4 and 5 do.
/// </para>
/// <para>
/// Where they run: after <c>CspManager.Init</c>, <c>DistParallel</c> asks the NameServer once for
/// pools with free workers and reserves workers at up to <see cref="MaxPoolsTried"/> of them at
/// once, directly (each pool confirms), waiting at most <see cref="ReserveBudget"/> in all: a pool
/// that does not answer in time (gone, stuck, or an impostor that accepts and never answers) costs
/// the run that budget once, not a wait of its own. Workers granted beyond the processes are given
/// back at once. The processes that got no remote worker run on local threads. Not initialized, after
/// <c>CspManager.InitStandAlone()</c>, or with no pool: all run locally, as <see cref="Parallel"/> would.
/// </para>
/// <para>
/// Failures: exceptions thrown by processes are collected and thrown together in an
/// <see cref="AggregateException"/> once every process has ended: a remote one as a
/// <see cref="RemoteProcessException"/> (remote type, message and stack trace), a refused one as a
/// <see cref="ProcessRefusedException"/>. If a pool is lost, its processes that had not started run
/// again locally; those that had started end with a <see cref="WorkerLostException"/> and are not
/// run again, because they may already have written to named channels (docs/WORKERPOOL.md).
/// </para>
/// <para>Thread-safety: one run at a time per instance.</para>
/// </remarks>
public sealed partial class DistParallel
{
    private readonly ICSPProcess[] _processes;
    private readonly CspNode? _node;

    /// <summary>Creates a distributed parallel of <paramref name="processes"/>, using <c>CspManager</c>'s node.</summary>
    /// <param name="processes">The processes to run once each; none may be null.</param>
    /// <exception cref="ArgumentException">A process is null.</exception>
    public DistParallel(params ICSPProcess[] processes)
        : this(processes, null)
    {
    }

    /// <summary>Creates a distributed parallel of <paramref name="processes"/> that finds pools through <paramref name="node"/> (for several nodes in one process: tests, samples).</summary>
    /// <param name="processes">The processes to run once each; none may be null.</param>
    /// <param name="node">The node whose NameServer lists the pools, and whose named constructs local processes use; null: <c>CspManager</c>'s.</param>
    /// <exception cref="ArgumentException">A process is null.</exception>
    public DistParallel(ICSPProcess[] processes, CspNode? node)
    {
        ArgumentNullException.ThrowIfNull(processes);
        for (int i = 0; i < processes.Length; i++)
        {
            if (processes[i] is null)
            {
                throw new ArgumentException($"processes[{i}] is null: DistParallel runs processes, so give it one.", nameof(processes));
            }
        }

        _processes = (ICSPProcess[])processes.Clone();
        _node = node;
    }

    /// <summary>
    /// Creates a distributed parallel of async processes: each gets its run's cancellation token as
    /// <see cref="IAsyncCSPProcess.RunAsync"/>'s argument (see <see cref="RunAsync"/>). Each runs on
    /// a thread of its own, remote or local, that waits for its task.
    /// </summary>
    /// <param name="processes">The processes to run once each; none may be null.</param>
    /// <param name="node">The node whose NameServer lists the pools, and whose named constructs local processes use; null: <c>CspManager</c>'s.</param>
    /// <exception cref="ArgumentException">A process is null.</exception>
    public DistParallel(IAsyncCSPProcess[] processes, CspNode? node)
        : this(AsThreadProcesses(processes), node)
    {
    }

    /// <summary>Creates a distributed parallel of async processes, using <c>CspManager</c>'s node; see <see cref="DistParallel(IAsyncCSPProcess[], CspNode?)"/>.</summary>
    /// <param name="processes">The processes to run once each; none may be null.</param>
    /// <exception cref="ArgumentException">A process is null.</exception>
    public DistParallel(IAsyncCSPProcess[] processes)
        : this(processes, null)
    {
    }

    /// <summary>How many processes of the last run ran on remote workers.</summary>
    public int RanRemotely { get; private set; }

    /// <summary>How many processes of the last run ran on local threads (including reruns of processes whose pool was lost before they started).</summary>
    public int RanLocally { get; private set; }

    /// <summary>
    /// The longest a run waits for pools to confirm workers, all of them asked at once; the processes
    /// not placed by then run locally. At least 1 ms. Default 30 seconds (a pool just started answers
    /// its first call slowly on a loaded machine).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Set to zero or less.</exception>
    public TimeSpan ReserveBudget
    {
        get;
        set
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(value, TimeSpan.FromMilliseconds(1));
            field = value;
        }
    } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The most pools a run asks for workers (those the NameServer lists with the most free workers
    /// first): each costs a stream, so a NameServer listing many pools cannot make a run open as many.
    /// At least 1. Default 32.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Set to less than 1.</exception>
    public int MaxPoolsTried
    {
        get;
        set
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(value, 1);
            field = value;
        }
    } = 32;

    /// <summary>
    /// The longest a cancelled <see cref="RunAsync"/> waits for its processes to end after
    /// cancelling them, before it ends with <see cref="OperationCanceledException"/> anyway. A
    /// process still running then ignores its token and touches no named construct: it runs on to
    /// its end (a thread cannot be stopped from outside), and its pool worker comes back then. At
    /// least 1 ms. Default 10 seconds.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Set to zero or less.</exception>
    public TimeSpan CancelTimeout
    {
        get;
        set
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(value, TimeSpan.FromMilliseconds(1));
            field = value;
        }
    } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// The cancellation token of the <see cref="DistParallel"/> process running on the calling
    /// thread, remote or local: cancelled when the run that started it is cancelled
    /// (<see cref="RunAsync"/>'s token). <see cref="CancellationToken.None"/> outside such a process.
    /// A process that computes long between channel operations watches it; one blocked on a named
    /// channel is ended by poison instead.
    /// </summary>
    public static CancellationToken ProcessCancellationToken => ProcessCancellation.Current?.Token ?? CancellationToken.None;

    /// <summary>Where the run logs (pools used, lost, refused). Default: the node's logger factory, else nowhere.</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>Turns processes into jobs and reads assembly images (tests replace it).</summary>
    internal IProcessShipper Shipper { get; set; } = PackerShipper.Instance;

    /// <summary>Runs every process once and returns when all have ended.</summary>
    /// <exception cref="AggregateException">One or more processes threw (see the remarks for what each exception means).</exception>
    /// <exception cref="ArgumentException">A process cannot be shipped (a field holds a channel end, a delegate or a type outside the allow-list); nothing ran.</exception>
    /// <exception cref="UnauthorizedAccessException">A pool refused this program's token or certificate; nothing ran.</exception>
    public void Run()
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("DistParallel.Run()", "DistParallel.RunAsync()");
#pragma warning disable RS0030 // The paper's synchronous Run() over RunAsync() (refused inside async processes above).
        RunAsync().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }

    /// <summary>Runs every process once, without holding a thread while they run.</summary>
    /// <param name="cancellationToken">
    /// Cancels the run. Processes not started yet never start. Each running process, remote or
    /// local, is cancelled: its <see cref="ProcessCancellationToken"/> is cancelled, and every named
    /// channel end, barrier and bucket it got (on its own thread) is poisoned, so a process blocked
    /// on one ends with <see cref="PoisonException"/>. The task then ends with
    /// <see cref="OperationCanceledException"/> once every process has ended, or after
    /// <see cref="CancelTimeout"/> at the latest (docs/WORKERPOOL.md, Cancelling a run).
    /// </param>
    /// <returns>A task that completes when every process has ended; it faults with an <see cref="AggregateException"/> holding the processes' exceptions.</returns>
    public async Task RunAsync(CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        CspNode? node = _node ?? CspManager.CurrentOrNull;
        ILogger logger = (LoggerFactory ?? node?.Options.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger<DistParallel>();
        var connections = new List<PoolConnection>();
        var remote = new (PoolConnection Connection, ShippedProcess Job)?[_processes.Length];
        var cancellations = new ProcessCancellation[_processes.Length];
        try
        {
            int assigned = 0;
            if (node?.Names is { } names && _processes.Length > 0)
            {
                // One NameServer round trip per run; the pools themselves confirm the workers.
                IReadOnlyList<WorkerPoolEntry> pools = await names.ListPoolsAsync(1, cancellationToken).ConfigureAwait(false);
                if (pools.Count > 0)
                {
                    assigned = await ReservePoolsAsync(node, pools, Pack(), connections, remote, logger, cancellationToken).ConfigureAwait(false);
                }
            }

            var runs = new Task<(Exception? Error, bool Remote)>[_processes.Length];
            for (int i = 0; i < _processes.Length; i++)
            {
                cancellations[i] = new ProcessCancellation();
                runs[i] = RunOneAsync(_processes[i], remote[i], node, cancellations[i], logger);
            }

            LogPlaced(logger, _processes.Length, assigned, connections.Count);
            Task<(Exception? Error, bool Remote)[]> all = Task.WhenAll(runs);
            (Exception? Error, bool Remote)[] results;
            try
            {
                results = await all.WaitAsync(cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                await CancelProcessesAsync(all, connections, cancellations, logger).ConfigureAwait(false);
                throw;
            }

            var errors = new List<Exception>();
            int ranRemotely = 0;
            foreach ((Exception? error, bool ranRemote) in results)
            {
                ranRemotely += ranRemote ? 1 : 0;
                if (error is not null)
                {
                    errors.Add(error);
                }
            }

            RanRemotely = ranRemotely;
            RanLocally = _processes.Length - ranRemotely;
            if (errors.Count > 0)
            {
                throw new AggregateException($"{errors.Count} of the {_processes.Length} processes of a DistParallel failed.", errors);
            }
        }
        finally
        {
            foreach (PoolConnection connection in connections)
            {
                if (cancellationToken.IsCancellationRequested)
                {
                    connection.Abort();
                }

                await connection.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>
    /// Cancels every process of a run (the local ones here, the remote ones by their pools) and
    /// waits for them to end, at most <see cref="CancelTimeout"/>.
    /// </summary>
    private async Task CancelProcessesAsync(Task all, List<PoolConnection> connections, ProcessCancellation[] cancellations, ILogger logger)
    {
        foreach (ProcessCancellation? cancellation in cancellations)
        {
            cancellation?.Cancel();
        }

        var asking = new Task[connections.Count];
        for (int i = 0; i < asking.Length; i++)
        {
            asking[i] = connections[i].CancelAsync();
        }

        await Task.WhenAll(asking).ConfigureAwait(false);
        try
        {
            await all.WaitAsync(CancelTimeout).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
        catch (TimeoutException)
        {
            // A process that ignores its token and touches no named construct cannot be stopped from
            // outside: its thread runs on (and a pool's worker stays busy) until it returns.
            LogNotEnded(logger, CancelTimeout);
        }
    }

    /// <summary>
    /// Asks the first <see cref="MaxPoolsTried"/> pools at once, within <see cref="ReserveBudget"/>;
    /// places processes on workers in the order the pools grant them and gives the surplus back.
    /// Every connection it returns is in <paramref name="connections"/> (the run disposes them).
    /// </summary>
    private async Task<int> ReservePoolsAsync(
        CspNode node, IReadOnlyList<WorkerPoolEntry> pools, ShippedProcess[] jobs, List<PoolConnection> connections,
        (PoolConnection Connection, ShippedProcess Job)?[] remote, ILogger logger, CancellationToken cancellationToken)
    {
        int wanted = _processes.Length;
        using var budget = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        budget.CancelAfter(ReserveBudget);
        var reserving = new List<Task<PoolConnection?>>();
        for (int i = 0; i < pools.Count && i < MaxPoolsTried; i++)
        {
            // Each pool is asked for what it says it has free (a hint), up to every process.
            int asked = Math.Clamp(pools[i].FreeWorkers, 1, wanted);
            reserving.Add(TryReserveAsync(pools[i], asked, node, logger, budget.Token, cancellationToken));
        }

        int assigned = 0;
        Exception? failure = null;
        while (reserving.Count > 0)
        {
            Task<PoolConnection?> answered = await Task.WhenAny(reserving).ConfigureAwait(false);
            reserving.Remove(answered);
            PoolConnection? connection;
            try
            {
                connection = await answered.ConfigureAwait(false);
            }
            catch (Exception e) when (e is UnauthorizedAccessException or OperationCanceledException)
            {
                // Reported once every reservation has ended, so that none is left holding workers.
                failure ??= e;
                await budget.CancelAsync().ConfigureAwait(false);
                continue;
            }

            if (connection is null)
            {
                continue;
            }

            int use = failure is null ? Math.Min(connection.Granted, wanted - assigned) : 0;
            if (use == 0)
            {
                await connection.DisposeAsync().ConfigureAwait(false);
                continue;
            }

            connections.Add(connection);
            if (connection.Granted > use)
            {
                await connection.ReleaseAsync(connection.Granted - use).ConfigureAwait(false);
            }

            for (int k = 0; k < use; k++, assigned++)
            {
                remote[assigned] = (connection, jobs[assigned]);
            }

            if (assigned == wanted)
            {
                // Every process has a worker: the pools still being asked are not needed.
                await budget.CancelAsync().ConfigureAwait(false);
            }
        }

        if (failure is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
        }

        return assigned;
    }

    private async Task<PoolConnection?> TryReserveAsync(WorkerPoolEntry pool, int asked, CspNode node, ILogger logger, CancellationToken budget, CancellationToken cancellationToken)
    {
        try
        {
            return await PoolConnection.ReserveAsync(pool, asked, node.PoolChannels, node.ProgramLabel, Shipper, logger, budget).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or RpcException or HttpRequestException && budget.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            // Out of the run's budget, or no longer needed (the call ends as cancelled, or as
            // aborted when the cancellation caught it mid-request): the pool is not used.
            LogNotInBudget(logger, pool.Name);
            return null;
        }
    }

    private static ICSPProcess[] AsThreadProcesses(IAsyncCSPProcess[] processes)
    {
        ArgumentNullException.ThrowIfNull(processes);
        var wrapped = new ICSPProcess[processes.Length];
        for (int i = 0; i < processes.Length; i++)
        {
            // A null stays null: the main constructor names it.
            wrapped[i] = processes[i] is { } process ? new AsyncProcessRunner(process) : null!;
        }

        return wrapped;
    }

    private ShippedProcess[] Pack()
    {
        // Every process is packed before any runs: a process that cannot travel is a mistake to
        // report now, not after its peers have started and are waiting for it.
        var jobs = new ShippedProcess[_processes.Length];
        for (int i = 0; i < jobs.Length; i++)
        {
            jobs[i] = Shipper.Pack(AsyncProcessRunner.Shipped(_processes[i]));
        }

        return jobs;
    }

    private static async Task<(Exception? Error, bool Remote)> RunOneAsync(
        ICSPProcess process, (PoolConnection Connection, ShippedProcess Job)? placed, CspNode? node, ProcessCancellation cancellation, ILogger logger)
    {
        try
        {
            if (placed is not { } remote)
            {
                return await RunLocalAsync(process, node, cancellation).ConfigureAwait(false);
            }

            JobResult result = await remote.Connection.RunAsync(remote.Job).ConfigureAwait(false);
            if (result.End == JobEnd.LostBeforeStart)
            {
                // Never started, so it had no effects: running it here keeps the run's promise.
                LogRerun(logger, remote.Job.TypeName, remote.Connection.Pool.Name);
                return await RunLocalAsync(process, node, cancellation).ConfigureAwait(false);
            }

            return (result.Error, true);
        }
        finally
        {
            cancellation.Dispose();
        }
    }

    private static async Task<(Exception? Error, bool Remote)> RunLocalAsync(ICSPProcess process, CspNode? node, ProcessCancellation cancellation)
    {
        if (cancellation.IsCancelled)
        {
            return (new OperationCanceledException("The run was cancelled before this process started."), false);
        }

        // The node is made ambient only when it is not the program's own (a node of a test or sample).
        CspNode? ambient = node is not null && !ReferenceEquals(node, CspManager.CurrentOrNull) ? node : null;
        Exception? error = await ProcessThread.Start(process.Run, ambient, cancellation, "cspnet-distparallel " + AsyncProcessRunner.Shipped(process).GetType().Name).ConfigureAwait(false);
        return (error, false);
    }

    [LoggerMessage(140, LogLevel.Debug, "DistParallel of {Count} processes: {Remote} on remote workers of {Pools} pools, the rest local")]
    private static partial void LogPlaced(ILogger logger, int count, int remote, int pools);

    [LoggerMessage(142, LogLevel.Debug, "The worker pool '{Pool}' did not grant workers within the run's reserve budget, or was no longer needed")]
    private static partial void LogNotInBudget(ILogger logger, string pool);

    [LoggerMessage(143, LogLevel.Warning, "A cancelled DistParallel stopped waiting for its processes after {Timeout}: some ignore their cancellation token and touch no named channel; their threads (and pool workers) stay busy until they return")]
    private static partial void LogNotEnded(ILogger logger, TimeSpan timeout);

    [LoggerMessage(141, LogLevel.Warning, "The worker pool '{Pool}' was lost before a {Type} started there; running it locally")]
    private static partial void LogRerun(ILogger logger, string type, string pool);
}
