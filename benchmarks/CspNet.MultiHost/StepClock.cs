using System.Diagnostics;
using Microsoft.Extensions.Logging;

namespace CspNet.MultiHost;

/// <summary>
/// When the NameServer client last failed over to a replica, found its lease gone and opened a
/// new one, from the client's own log events; what the recovery time of a program is made of.
/// Everything else goes to <see cref="TraceLog"/> when that is on.
/// </summary>
internal sealed class StepClock(ILoggerFactory? inner) : ILoggerFactory
{
    // The NameServer client's events (NameServerClient.Lease.cs, NameServerClient.cs).
    private const int LeaseOpened = 20, LeaseLost = 21, FailedOver = 26;
    private long _failedOver, _leaseLost, _leaseOpened;

    /// <summary>Milliseconds from <paramref name="start"/> to each step seen since then, or "-" for one not seen.</summary>
    internal string Since(long start)
    {
        string At(long stamp) => stamp > start ? Stopwatch.GetElapsedTime(start, stamp).TotalMilliseconds.ToString("0", System.Globalization.CultureInfo.InvariantCulture) : "-";
        return $"failover {At(Volatile.Read(ref _failedOver))} lease-lost {At(Volatile.Read(ref _leaseLost))} lease-opened {At(Volatile.Read(ref _leaseOpened))}";
    }

    public ILogger CreateLogger(string categoryName) =>
        categoryName.EndsWith(".NameServerClient", StringComparison.Ordinal)
            ? new Logger(this, inner?.CreateLogger(categoryName))
            : inner?.CreateLogger(categoryName) ?? Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;

    public void AddProvider(ILoggerProvider provider)
    {
    }

    public void Dispose() => inner?.Dispose();

    private sealed class Logger(StepClock clock, ILogger? inner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Information || inner?.IsEnabled(logLevel) == true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            long now = Stopwatch.GetTimestamp();
            switch (eventId.Id)
            {
                case FailedOver: Volatile.Write(ref clock._failedOver, now); break;
                case LeaseLost: Volatile.Write(ref clock._leaseLost, now); break;
                case LeaseOpened: Volatile.Write(ref clock._leaseOpened, now); break;
            }

            if (inner?.IsEnabled(logLevel) == true)
            {
                inner.Log(logLevel, eventId, state, exception, formatter);
            }
        }
    }
}
