using System.Diagnostics;
using Microsoft.Extensions.Logging;

namespace CspNet.MultiHost;

/// <summary>
/// With CSPNET_MULTIHOST_TRACE=1, a program's CspNet log at Debug on its standard error, each line
/// with the milliseconds since the process started, so the harness's output lines up the steps of
/// different programs (a failover, a lease opened again, a link set up).
/// </summary>
internal sealed class TraceLog : ILoggerFactory, ILoggerProvider
{
    private static readonly long Started = Process.GetCurrentProcess().StartTime.ToUniversalTime().Ticks;

    internal static ILoggerFactory? FromEnvironment() =>
        Environment.GetEnvironmentVariable("CSPNET_MULTIHOST_TRACE") == "1" ? new TraceLog() : null;

    public ILogger CreateLogger(string categoryName) => new Logger(categoryName);

    public void AddProvider(ILoggerProvider provider)
    {
    }

    public void Dispose()
    {
    }

    private sealed class Logger(string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Debug;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            double ms = TimeSpan.FromTicks(DateTime.UtcNow.Ticks - Started).TotalMilliseconds;
            Console.Error.WriteLine($"{ms,10:0.0} ms {logLevel} {category}: {formatter(state, exception)}");
        }
    }
}
