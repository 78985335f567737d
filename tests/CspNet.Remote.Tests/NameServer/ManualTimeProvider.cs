namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// A clock that moves only when a test calls <see cref="Advance"/>: timers due by then fire on the
/// test's thread, in due order, so lease expiry and waits are deterministic.
/// </summary>
/// <remarks>Microsoft.Extensions.TimeProvider.Testing is not in the central package list; this is the part the tests need.</remarks>
internal sealed class ManualTimeProvider : TimeProvider
{
    private static readonly DateTimeOffset Epoch = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);
    private readonly Lock _lock = new();
    private readonly List<ManualTimer> _timers = [];
    private long _now;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public override long GetTimestamp()
    {
        lock (_lock)
        {
            return _now;
        }
    }

    public override DateTimeOffset GetUtcNow() => Epoch + TimeSpan.FromTicks(GetTimestamp());

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = new ManualTimer(this, callback, state);
        timer.Change(dueTime, period);
        return timer;
    }

    /// <summary>Moves the clock forward, firing each timer whose time comes, at its time.</summary>
    public void Advance(TimeSpan by)
    {
        long target;
        lock (_lock)
        {
            target = _now + by.Ticks;
        }

        while (true)
        {
            ManualTimer? next = null;
            lock (_lock)
            {
                foreach (ManualTimer timer in _timers)
                {
                    if (timer.Due <= target && (next is null || timer.Due < next.Due))
                    {
                        next = timer;
                    }
                }

                if (next is null)
                {
                    _now = target;
                    return;
                }

                _now = Math.Max(_now, next.Due);
                if (next.Period > 0)
                {
                    next.Due += next.Period;
                }
                else
                {
                    _timers.Remove(next);
                }
            }

            next.Fire();
        }
    }

    private sealed class ManualTimer(ManualTimeProvider owner, TimerCallback callback, object? state) : ITimer
    {
        public long Due { get; set; }

        public long Period { get; private set; }

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            lock (owner._lock)
            {
                owner._timers.Remove(this);
                if (dueTime == Timeout.InfiniteTimeSpan)
                {
                    return true;
                }

                Due = owner._now + dueTime.Ticks;
                Period = period == Timeout.InfiniteTimeSpan ? 0 : period.Ticks;
                owner._timers.Add(this);
            }

            return true;
        }

        public void Fire() => callback(state);

        public void Dispose()
        {
            lock (owner._lock)
            {
                owner._timers.Remove(this);
            }
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
