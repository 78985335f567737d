using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Scheduling;

namespace CspNet.ControlledTests;

/// <summary>
/// One controlled run of a scenario: every party (thread or async process) runs on a thread of
/// its own, and exactly one runs at a time. At each scheduling point of the engine
/// (<see cref="ControlPoint"/>) the running party asks the <see cref="IStrategy"/> which enabled
/// party runs next and hands it the token, so the run is the sequence of those choices, and the
/// same seed gives the same run.
/// </summary>
/// <remarks>
/// A party is enabled when it is runnable, parked on an event that is set, or an async party
/// with a continuation queued. No scheduling point is taken while the running thread holds an
/// engine lock, so no party ever waits for a lock: every wait the engine does is one the
/// scheduler sees. When no party is enabled and some have not finished, that is a deadlock.
/// </remarks>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "A party that a failure left running may still touch the events after the run; they own no kernel handle (their WaitHandle is never read).")]
internal sealed class Schedule : IControlHooks
{
    [ThreadStatic]
    private static Party? t_current;

    [ThreadStatic]
    private static List<object>? t_gates;

    [ThreadStatic]
    private static List<Lock>? t_lockGates;

    [ThreadStatic]
    private static bool t_atomic;

    private readonly List<Party> _parties = [];
    private readonly IStrategy _strategy;
    private readonly int _stepBound;
    private readonly Dictionary<IHandOff, Party> _awaiting = new(ReferenceEqualityComparer.Instance);
    private readonly List<int> _trace = [];
    private readonly List<int> _enabled = [];
    private readonly ManualResetEventSlim _ended = new();
    private readonly Lock _failureLock = new();
    private volatile bool _aborted;
    private string? _failure;

    internal Schedule(IStrategy strategy, int stepBound)
    {
        _strategy = strategy;
        _stepBound = stepBound;
    }

    /// <summary>Scheduling points taken so far.</summary>
    internal int Steps { get; private set; }

    /// <summary>The parties chosen at each scheduling point, by index.</summary>
    internal IReadOnlyList<int> Trace => _trace;

    internal string? Failure => _failure;

    internal void AddThread(string name, Action body) => _parties.Add(new Party(name, _parties.Count, body, null));

    internal void AddAsync(string name, Func<Task> body) => _parties.Add(new Party(name, _parties.Count, null, body));

    /// <summary>Runs the parties to the end, a failure, or <paramref name="wallTimeout"/>; returns the failure or null.</summary>
    internal string? Run(TimeSpan wallTimeout)
    {
        _strategy.Start(_parties.Count);
        ControlPoint.Hooks = this;
        try
        {
            foreach (Party party in _parties)
            {
                PartyThreads.Start(() => PartyMain(party));
            }

            if (_parties.Count > 0)
            {
                Party first = Choose(null)!;
                _trace.Add(first.Index);
                first.Turn.Release();
            }
            else
            {
                _ended.Set();
            }

            if (!_ended.Wait(wallTimeout))
            {
                Fail($"the schedule did not end within {wallTimeout.TotalSeconds:0} s of wall time (a wait the scheduler does not see); {Describe()}");
            }

            foreach (Party party in _parties)
            {
                // A party that a failure left inside engine code unwinds on its own; it runs on a
                // background thread, so one that never does cannot keep the test host alive.
                party.Exited.Wait(TimeSpan.FromSeconds(5));
            }
        }
        finally
        {
            ControlPoint.Hooks = null;
        }

        return _failure;
    }

    // ---- IControlHooks: called by the engine on any thread; only a party's thread is controlled ----

    public void BeforeLock(object gate)
    {
        if (t_current is not { } self)
        {
            return;
        }

        List<object> gates = t_gates ??= [];
        if (!HoldsEngineLock(gates))
        {
            SwitchFrom(self);
        }

        gates.Add(gate);
    }

    public void BeforeLock(Lock gate)
    {
        if (t_current is not { } self)
        {
            return;
        }

        List<Lock> gates = t_lockGates ??= [];
        if (!HoldsEngineLock(t_gates ??= []))
        {
            SwitchFrom(self);
        }

        gates.Add(gate);
    }

    public void BeforePark(ManualResetEventSlim signal)
    {
        if (t_current is not { } self)
        {
            return;
        }

        if (HoldsEngineLock(t_gates ??= []))
        {
            Fail($"{self.Name} parks while holding an engine lock");
            throw new ScheduleAbortedException();
        }

        while (!signal.IsSet)
        {
            self.State = PartyState.Parked;
            self.ParkedOn = signal;
            SwitchFrom(self);
        }

        self.State = PartyState.Runnable;
        self.ParkedOn = null;
    }

    public void Step()
    {
        if (t_current is { } self && !HoldsEngineLock(t_gates ??= []))
        {
            SwitchFrom(self);
        }
    }

    public void Awaiting(IHandOff owner)
    {
        if (t_current is { } self)
        {
            _awaiting[owner] = self;
        }
    }

    public bool Dispatch(IHandOff item)
    {
        if (t_current is null)
        {
            if (_awaiting.ContainsKey(item))
            {
                Fail("a party's continuation was dispatched from a thread outside the schedule (a timer or the thread pool)");
                return true;
            }

            return false;
        }

        if (!_awaiting.TryGetValue(item, out Party? owner))
        {
            Fail($"{t_current.Name} dispatched a continuation that no party awaits");
            return true;
        }

        owner.Inbox.Enqueue(item);
        return true;
    }

    // ---- the token ------------------------------------------------------------------------------

    /// <summary>
    /// Runs <paramref name="action"/> without scheduling points: for a call whose callbacks another
    /// party may wait for by spinning (<see cref="CancellationTokenSource.Cancel()"/>: disposing a
    /// registration waits for its callback if it is running), which a token scheduler would hang.
    /// </summary>
    internal static void Atomically(Action action)
    {
        t_atomic = true;
        try
        {
            action();
        }
        finally
        {
            t_atomic = false;
        }
    }

    /// <summary>Whether this thread holds a lock it took after a scheduling point (the others it has left are forgotten).</summary>
    private static bool HoldsEngineLock(List<object> gates)
    {
        if (t_atomic)
        {
            return true;
        }

        gates.RemoveAll(static gate => !Monitor.IsEntered(gate));
        List<Lock> lockGates = t_lockGates ??= [];
        lockGates.RemoveAll(static gate => !gate.IsHeldByCurrentThread);
        return gates.Count > 0 || lockGates.Count > 0;
    }

    /// <summary>A party's whole life on its thread; true if the thread may serve another schedule.</summary>
    private bool PartyMain(Party self)
    {
        try
        {
            PartyLife(self);
        }
        finally
        {
            t_current = null;
            self.Exited.Set();
        }

        // After a failure the thread may hold stale engine state (a cached waiter still queued):
        // it ends instead of serving the next schedule.
        return !_aborted;
    }

    private void PartyLife(Party self)
    {
        t_current = self;
        t_gates = [];
        t_lockGates = [];
        self.Turn.Wait();
        try
        {
            if (_aborted)
            {
                return;
            }

            if (self.ThreadBody is { } body)
            {
                body();
            }
            else
            {
                RunAsyncParty(self);
            }
        }
        catch (ScheduleAbortedException)
        {
        }
#pragma warning disable CA1031 // Any exception of a party fails the schedule, with its seed.
        catch (Exception e)
#pragma warning restore CA1031
        {
            Fail($"{self.Name} threw {e}");
        }

        self.State = PartyState.Done;
        if (!_aborted)
        {
            try
            {
                SwitchFrom(self);
            }
            catch (ScheduleAbortedException)
            {
            }
        }
    }

    /// <summary>Runs an async party's body, then its continuations as they are dispatched to it, until its task ends.</summary>
    private void RunAsyncParty(Party self)
    {
        Task task = self.AsyncBody!();
        while (!task.IsCompleted)
        {
            if (self.Inbox.Count == 0)
            {
                self.State = PartyState.Idle;
                SwitchFrom(self);
                self.State = PartyState.Runnable;
                continue;
            }

            self.Inbox.Dequeue().InvokeContinuation();
        }

        if (self.Inbox.Count > 0)
        {
            Fail($"{self.Name} ended with {self.Inbox.Count} continuation(s) never run");
        }

        task.GetAwaiter().GetResult();
    }

    /// <summary>A scheduling point of <paramref name="self"/>: the strategy picks who runs next, and self waits for its turn.</summary>
    private void SwitchFrom(Party self)
    {
        if (_aborted)
        {
            throw new ScheduleAbortedException();
        }

        Steps++;
        if (Steps > _stepBound)
        {
            Fail($"the step bound ({_stepBound}) was reached: a livelock, or a scenario that needs a higher bound; {Describe()}");
            throw new ScheduleAbortedException();
        }

        Party? next = Choose(self);
        if (next is null)
        {
            if (_parties.TrueForAll(static p => p.State == PartyState.Done))
            {
                _ended.Set();
                return;
            }

            Fail($"deadlock: no party can run; {Describe()}");
            throw new ScheduleAbortedException();
        }

        _trace.Add(next.Index);
        if (next == self)
        {
            return;
        }

        next.Turn.Release();
        if (self.State == PartyState.Done)
        {
            return;
        }

        self.Turn.Wait();
        if (_aborted)
        {
            throw new ScheduleAbortedException();
        }
    }

    private Party? Choose(Party? current)
    {
        _enabled.Clear();
        foreach (Party party in _parties)
        {
            if (party.IsEnabled)
            {
                _enabled.Add(party.Index);
            }
        }

        return _enabled.Count == 0 ? null : _parties[_strategy.Choose(_enabled, current?.Index ?? -1, Steps)];
    }

    private void Fail(string message)
    {
        lock (_failureLock)
        {
            _failure ??= $"{message} (after {Steps} scheduling points)";
            _aborted = true;
        }

        foreach (Party party in _parties)
        {
            party.Turn.Release();
        }

        _ended.Set();
    }

    private string Describe()
    {
        var text = new StringBuilder("parties: ");
        text.AppendJoin(", ", _parties.Select(p => $"{p.Name} {p.State}{(p.State == PartyState.Parked && p.ParkedOn!.IsSet ? " (woken)" : "")}"));
        text.Append("; last choices: ");
        text.AppendJoin(" ", _trace.Skip(Math.Max(0, _trace.Count - 40)).Select(i => _parties[i].Name));
        return text.ToString();
    }

    private enum PartyState
    {
        Runnable,
        Parked,
        Idle,
        Done,
    }

    private sealed class Party(string name, int index, Action? threadBody, Func<Task>? asyncBody)
    {
        internal string Name { get; } = name;

        internal int Index { get; } = index;

        internal Action? ThreadBody { get; } = threadBody;

        internal Func<Task>? AsyncBody { get; } = asyncBody;

        internal SemaphoreSlim Turn { get; } = new(0);

        internal Queue<IHandOff> Inbox { get; } = new();

        internal ManualResetEventSlim Exited { get; } = new();

        internal PartyState State { get; set; }

        internal ManualResetEventSlim? ParkedOn { get; set; }

        internal bool IsEnabled => State switch
        {
            PartyState.Runnable => true,
            PartyState.Parked => ParkedOn!.IsSet,
            PartyState.Idle => Inbox.Count > 0,
            _ => false,
        };
    }
}

/// <summary>Unwinds a party whose schedule ended with a failure elsewhere.</summary>
internal sealed class ScheduleAbortedException : Exception
{
    public ScheduleAbortedException()
        : base("The schedule was abandoned after a failure.")
    {
    }

    public ScheduleAbortedException(string message)
        : base(message)
    {
    }

    public ScheduleAbortedException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}

/// <summary>
/// Threads for the parties, kept between schedules: starting a thread costs more than a whole
/// short schedule. A thread whose party ended with a failure is not kept.
/// </summary>
internal static class PartyThreads
{
    private static readonly Stack<Worker> s_idle = new();
    private static readonly Lock s_lock = new();

    /// <summary>Runs <paramref name="body"/> on an idle thread, or a new one; the thread is kept if it returns true.</summary>
    internal static void Start(Func<bool> body)
    {
        Worker? worker;
        lock (s_lock)
        {
            s_idle.TryPop(out worker);
        }

        worker ??= new Worker();
        worker.Run(body);
    }

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "A worker lives as long as its thread; the semaphore owns no kernel handle.")]
    private sealed class Worker
    {
        private readonly SemaphoreSlim _start = new(0);
        private Func<bool>? _body;

        internal Worker()
        {
            var thread = new Thread(Loop, 256 * 1024) { IsBackground = true, Name = "controlled party" };
            thread.Start();
        }

        internal void Run(Func<bool> body)
        {
            _body = body;
            _start.Release();
        }

        private void Loop()
        {
            while (true)
            {
                _start.Wait();
                if (!_body!())
                {
                    return;
                }

                _body = null;
                lock (s_lock)
                {
                    s_idle.Push(this);
                }
            }
        }
    }
}
