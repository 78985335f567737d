using System.Collections.Concurrent;
using Barrier = CspNet.Barrier;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Barriers;

/// <summary>
/// Many phases with fixed and with changing membership: no process passes phase k before every
/// process enrolled in phase k has arrived (or resigned), and nothing deadlocks.
/// </summary>
public class BarrierPhaseTests
{
    [Theory(Timeout = 30_000)]
    [InlineData(4, 0, 2_000)]
    [InlineData(0, 6, 2_000)]
    [InlineData(3, 3, 2_000)]
    public async Task Sync_FixedPartiesManyPhases_NoProcessPassesPhaseBeforeAllArrive(int threadParties, int asyncParties, int phases)
    {
        int parties = threadParties + asyncParties;
        var barrier = new Barrier(parties);
        var log = new PhaseLog(phases, barrier);
        var processes = new List<Task>();

        for (int i = 0; i < threadParties; i++)
        {
            processes.Add(Party.OnThread(() => log.Guard(() =>
            {
                for (int phase = 0; phase < phases; phase++)
                {
                    log.Arrive(phase);
                    barrier.Sync();
                    log.Pass(phase, parties);
                }
            })));
        }

        for (int i = 0; i < asyncParties; i++)
        {
            processes.Add(Party.Async(() => log.GuardAsync(async () =>
            {
                for (int phase = 0; phase < phases; phase++)
                {
                    log.Arrive(phase);
                    await barrier.SyncAsync();
                    log.Pass(phase, parties);
                }
            })));
        }

        await Task.WhenAll(processes);

        log.AssertNoViolations();
        for (int phase = 0; phase < phases; phase++)
        {
            Assert.Equal(parties, log.Arrivals(phase));
            Assert.Equal(parties, log.Passed(phase));
        }

        Assert.Equal(0, barrier.Waiting);
        Assert.Equal(parties, barrier.Enrolled);
    }

    [Theory(Timeout = 30_000)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public async Task EnrollResign_ChurnWhileRunning_PhasesExactAndNoDeadlock(int seed)
    {
        var run = new ChurnRun(seed, keeperPhases: 500, maxLifetime: 50, spawnBudget: 40);

        await run.RunAsync().WaitAsync(TimeSpan.FromSeconds(20));

        run.Log.AssertNoViolations();
        Assert.Equal(0, run.Barrier.Enrolled);
        Assert.Equal(0, run.Barrier.Waiting);
        Assert.Equal(0, run.SpawnBudgetLeft);
    }

    /// <summary>
    /// A barrier whose membership changes while it runs. Two keepers (one thread, one async) sync
    /// for a fixed number of phases; other members live a random number of phases and then resign.
    /// Any member may, between two syncs, enroll a child (thread or async) that starts in the
    /// phase the parent has not synced yet; that is the only phase the child can be part of,
    /// because the parent holds that phase open. The bookkeeping per phase k is: arrivals(k) must
    /// equal arrivals(k-1) + joined(k) - resigned(k), i.e. everyone who passed phase k-1 and
    /// every child enrolled in phase k either synced or resigned in phase k.
    /// </summary>
    private sealed class ChurnRun
    {
        private readonly int _keeperPhases;
        private readonly int _maxLifetime;
        private readonly int[] _joined;
        private readonly int[] _resigned;
        private readonly int _initialMembers;
        private readonly ConcurrentQueue<(int Phase, int Lifetime, bool OnThread, int Seed)> _initial = new();
        private readonly TaskCompletionSource _allEnded = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _spawnBudget;
        private int _live;

        internal ChurnRun(int seed, int keeperPhases, int maxLifetime, int spawnBudget)
        {
            _keeperPhases = keeperPhases;
            _maxLifetime = maxLifetime;
            _spawnBudget = spawnBudget;
            int phases = keeperPhases + maxLifetime + 2;
            _joined = new int[phases];
            _resigned = new int[phases];

            var random = new Random(seed);
            _initial.Enqueue((0, keeperPhases, true, random.Next()));
            _initial.Enqueue((0, keeperPhases, false, random.Next()));
            for (int i = 0; i < 4; i++)
            {
                _initial.Enqueue((0, random.Next(1, maxLifetime + 1), i % 2 == 0, random.Next()));
            }

            _initialMembers = _initial.Count;
            Barrier = new Barrier(_initialMembers);
            Log = new PhaseLog(phases, Barrier);
        }

        internal Barrier Barrier { get; }

        internal PhaseLog Log { get; }

        internal int SpawnBudgetLeft => Volatile.Read(ref _spawnBudget);

        internal Task RunAsync()
        {
            _live = _initialMembers;
            while (_initial.TryDequeue(out var member))
            {
                Start(member.Phase, member.Lifetime, member.OnThread, member.Seed);
            }

            return _allEnded.Task;
        }

        private void Start(int startPhase, int lifetime, bool onThread, int seed)
        {
            if (onThread)
            {
                _ = Party.OnThread(() =>
                {
                    try
                    {
                        Log.Guard(() => RunThread(startPhase, lifetime, new Random(seed)));
                    }
                    finally
                    {
                        Ended();
                    }
                });
            }
            else
            {
                _ = Party.Async(async () =>
                {
                    try
                    {
                        await Log.GuardAsync(() => RunAsyncMember(startPhase, lifetime, new Random(seed)));
                    }
                    finally
                    {
                        Ended();
                    }
                });
            }
        }

        private void RunThread(int startPhase, int lifetime, Random random)
        {
            for (int phase = startPhase; ; phase++)
            {
                if (BetweenSyncs(phase, startPhase, lifetime, random))
                {
                    return;
                }

                Log.Arrive(phase);
                Barrier.Sync();
                Log.Pass(phase, Expected(phase));
            }
        }

        private async Task RunAsyncMember(int startPhase, int lifetime, Random random)
        {
            for (int phase = startPhase; ; phase++)
            {
                if (BetweenSyncs(phase, startPhase, lifetime, random))
                {
                    return;
                }

                Log.Arrive(phase);
                await Barrier.SyncAsync();
                Log.Pass(phase, Expected(phase));
            }
        }

        /// <summary>What a member does before syncing in <paramref name="phase"/>: resign (returns true) or maybe enroll a child.</summary>
        private bool BetweenSyncs(int phase, int startPhase, int lifetime, Random random)
        {
            if (phase - startPhase == lifetime)
            {
                Interlocked.Increment(ref _resigned[phase]);
                Log.CheckNotPassed(phase, "resigned in");
                Barrier.Resign();
                return true;
            }

            if (phase < _keeperPhases && random.Next(8) == 0 && TryTakeSpawn())
            {
                // The child belongs to this phase: this member has not synced in it, so it
                // cannot have completed, and the child's enrollment makes it wait for the child.
                Interlocked.Increment(ref _joined[phase]);
                Barrier.Enroll();
                Interlocked.Increment(ref _live);
                Start(phase, random.Next(0, _maxLifetime + 1), random.Next(2) == 0, random.Next());
            }

            return false;
        }

        private int Expected(int phase)
        {
            int before = phase == 0 ? _initialMembers : Log.Arrivals(phase - 1);
            return before + Volatile.Read(ref _joined[phase]) - Volatile.Read(ref _resigned[phase]);
        }

        private bool TryTakeSpawn()
        {
            int budget = Volatile.Read(ref _spawnBudget);
            while (budget > 0)
            {
                int seen = Interlocked.CompareExchange(ref _spawnBudget, budget - 1, budget);
                if (seen == budget)
                {
                    return true;
                }

                budget = seen;
            }

            return false;
        }

        private void Ended()
        {
            if (Interlocked.Decrement(ref _live) == 0)
            {
                _allEnded.SetResult();
            }
        }
    }
}
