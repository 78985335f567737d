using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using Xunit.Abstractions;

namespace CspNet.ControlledTests;

/// <summary>
/// A selection over an input whose channel's home moves away while the selection runs (the
/// distributed layer's following ends: docs/DISTRIBUTED.md, "A moving home"), under the
/// controlled scheduler. The guard is synchronous while the channel is here, commits nothing
/// while it moves, and commits asynchronously (reserve, then confirm or release) once it is
/// elsewhere; it signals when that changes, and the engine reads its capabilities again at every
/// scan (<see cref="Guard.CapabilitiesChange"/>). A writer's pending write here is stopped by the
/// move (exactly: it was taken, or it took nothing and is written again at the new place). Under
/// every explored interleaving each value is read exactly once, and each reservation is confirmed
/// or released exactly once.
/// </summary>
public class MovingGuardScenarioTests(ITestOutputHelper output)
{
    /// <summary>Selector thread (T) or async (A); PriSelect (P) or FairSelect (F).</summary>
    public static TheoryData<string> Kinds => new() { "TP", "TF", "AP", "AF" };

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Select_HomeMovesWhileAWriterWaitsHere_EveryValueOnceAndEveryReservationSettled(string kinds)
    {
        // Across the schedules, both outcomes of the writer's race with the move must be seen.
        int writesTakenHere = 0;
        int writesReadElsewhere = 0;
        Explorer.Explore(output, $"{nameof(Select_HomeMovesWhileAWriterWaitsHere_EveryValueOnceAndEveryReservationSettled)}({kinds})", s =>
        {
            var here = new Any2AnyChannel<int>();
            var moving = new MovingInputGuard(here.CreateIn());
            var other = new One2OneChannel<int>();
            var selection = new Alternative(moving, other.In);
            var stop = new CancellationTokenSource();
            var seen = new List<int>();
            bool fair = kinds[1] == 'F';
            int takenFromCore = 0;

            // The writer of the moving channel: a write waiting here when the home moves is
            // stopped there and written again at the new place, as a following end does.
            s.Async("writer", async () =>
            {
                try
                {
                    await here.CreateOut().WriteAsync(1, stop.Token);
                    takenFromCore = 1;
                }
                catch (OperationCanceledException)
                {
                    moving.ArriveElsewhere(1);
                }
            });
            ChannelScenarioTests.AddWriter(s, "other writer", true, other.Out, 50, 1);
            s.Thread("mover", () =>
            {
                moving.BeginMove();
                Schedule.Atomically(stop.Cancel);
                moving.EndMove();
            });

            if (kinds[0] == 'T')
            {
                s.Thread("selector", () =>
                {
                    for (int k = 0; k < 2; k++)
                    {
                        int chosen = fair ? selection.FairSelect() : selection.PriSelect();
                        seen.Add(chosen == 0 ? moving.TakeChosen() : other.In.Read());
                    }
                });
            }
            else
            {
                s.Async("selector", async () =>
                {
                    for (int k = 0; k < 2; k++)
                    {
                        int chosen = fair ? await selection.FairSelectAsync() : await selection.PriSelectAsync();
                        seen.Add(chosen == 0 ? moving.TakeChosen() : await other.In.ReadAsync());
                    }
                });
            }

            s.Check(() =>
            {
                stop.Dispose();
                Checks.ExactlyOnce(seen, [1, 50]);
                Assert.Equal(moving.Reserved, moving.Confirmed + moving.Released);
                Assert.Equal(1 - takenFromCore, moving.ArrivedElsewhere);
                Assert.Equal(0, moving.WaitingElsewhere);
                writesTakenHere += takenFromCore;
                writesReadElsewhere += moving.Confirmed;
            });
        });
        Assert.True(writesTakenHere > 0 && writesReadElsewhere > 0, $"The exploration missed an outcome: the write was taken here in {writesTakenHere} schedules, read elsewhere in {writesReadElsewhere}.");
    }

    /// <summary>
    /// An input end that follows its channel: here, the core channel's own end (synchronous);
    /// while moving, nothing; then a reservation-based input over the values that arrived at the
    /// new place. Each scan goes where <see cref="Capabilities"/> found the channel.
    /// </summary>
    private sealed class MovingInputGuard(AltingChannelIn<int> core) : Guard
    {
        private const int Here = 0;
        private const int Moving = 1;
        private const int Elsewhere = 2;

        private readonly Queue<int> _elsewhere = new();
        private int _place = Here;
        private int _scan = Here;            // owner only: where the current scan goes
        private GuardSite? _enabled;          // the site to signal while enabled
        private bool _enabledOnCore;          // owner only
        private int? _reserved;               // owner only
        private int? _taken;                  // owner only: the value a confirmed reservation took

        internal int Reserved { get; private set; }

        internal int Confirmed { get; private set; }

        internal int Released { get; private set; }

        internal int ArrivedElsewhere { get; private set; }

        internal int WaitingElsewhere => _elsewhere.Count;

        internal override bool CapabilitiesChange => true;

        protected internal override GuardCapabilities Capabilities
        {
            get
            {
                _scan = Volatile.Read(ref _place);
                return _scan == Elsewhere ? GuardCapabilities.CommitsAsynchronously : GuardCapabilities.None;
            }
        }

        /// <summary>The home begins to move: a selection waiting here scans again (and finds nothing to wait on).</summary>
        internal void BeginMove()
        {
            Interlocked.Exchange(ref _place, Moving);
            Volatile.Read(ref _enabled)?.Signal();
        }

        /// <summary>The channel is elsewhere now: a waiting selection scans again, there.</summary>
        internal void EndMove()
        {
            Interlocked.Exchange(ref _place, Elsewhere);
            Volatile.Read(ref _enabled)?.Signal();
        }

        /// <summary>A value written at the new place (by a write the move stopped here).</summary>
        internal void ArriveElsewhere(int value)
        {
            _elsewhere.Enqueue(value);
            ArrivedElsewhere++;
            Volatile.Read(ref _enabled)?.Signal();
        }

        /// <summary>The chosen value: held by the core end (a commit here) or taken by a confirmed reservation.</summary>
        internal int TakeChosen()
        {
            if (_taken is int value)
            {
                _taken = null;
                return value;
            }

            return core.Read(); // holding the value the selection committed here: never waits
        }

        protected internal override bool TryCommit(GuardSite site)
        {
            switch (_scan)
            {
                case Here:
                    return core.TryCommit(site);
                case Elsewhere when _elsewhere.Count > 0:
                    site.Signal(); // ready, but commits only by a reservation
                    return false;
                default:
                    return false;
            }
        }

        protected internal override void Enable(GuardSite site)
        {
            Interlocked.Exchange(ref _enabled, site);
            if (_scan == Here)
            {
                core.Enable(site);
                _enabledOnCore = true;
            }

            // The place changed since the scan read it, or a value waits elsewhere: scan again.
            if (Volatile.Read(ref _place) != _scan || (_scan == Elsewhere && _elsewhere.Count > 0))
            {
                site.Signal();
            }
        }

        protected internal override void Disable(GuardSite site)
        {
            Interlocked.Exchange(ref _enabled, null);
            if (_enabledOnCore)
            {
                _enabledOnCore = false;
                core.Disable(site);
            }
        }

        protected internal override ValueTask<bool> TryReserveAsync(GuardSite site, CancellationToken cancellationToken)
        {
            Assert.Null(_reserved);
            if (_scan != Elsewhere || _elsewhere.Count == 0)
            {
                return new(false);
            }

            _reserved = _elsewhere.Dequeue();
            Reserved++;
            return new(true);
        }

        protected internal override void Confirm(GuardSite site)
        {
            if (_scan == Here)
            {
                core.Confirm(site);
                return;
            }

            _taken = _reserved ?? throw new InvalidOperationException("Confirmed without a reservation.");
            _reserved = null;
            Confirmed++;
        }

        protected internal override void Release(GuardSite site)
        {
            int value = _reserved ?? throw new InvalidOperationException("Released without a reservation.");
            _reserved = null;
            Released++;

            // Back at the front, as a remote home puts a released value back.
            int[] rest = [.. _elsewhere];
            _elsewhere.Clear();
            _elsewhere.Enqueue(value);
            foreach (int later in rest)
            {
                _elsewhere.Enqueue(later);
            }
        }
    }
}
